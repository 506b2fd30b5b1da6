// Package reviewauth is the frontend authorizer that ties toolgate's approval decisions to the
// caller the frontend authenticated (approvalauth.Check): a decision (the approve or reject
// Update) passes only when its reviewer is the claims' subject and its groups are groups the
// claim mapper vouches for ([GroupClaims]); every other request is left to the wrapped
// authorizer. The embedded server takes it as devserver.Options.Authorizer; a self-hosted server
// build passes it (or its own authorizer calling approvalauth.Check) to temporal.WithAuthorizer.
package reviewauth

import (
	"context"
	"errors"

	"go.temporal.io/server/common/authorization"

	"github.com/toolgate/toolgate/approvalauth"
)

// GroupClaims is what a claim mapper's Claims.Extensions implements to vouch for the subject's
// groups; a decision naming a group the claims do not carry is refused (with the server's own
// JWT claim mapper, which sets no Extensions, every decision that names a group is).
type GroupClaims interface {
	ReviewerGroups() []string
}

// Authorizer checks decisions, then asks Next.
type Authorizer struct {
	// Next decides every request first (a decision must pass both). Optional: default nil
	// allows everything else, as a server without an authorizer does.
	Next authorization.Authorizer
}

// New returns an Authorizer that wraps next (nil: allow all other requests).
func New(next authorization.Authorizer) *Authorizer {
	return &Authorizer{Next: next}
}

var _ authorization.Authorizer = (*Authorizer)(nil)

// Authorize implements authorization.Authorizer: a decision the claims do not name is denied
// with the reason (the caller reads it as a PermissionDenied error's Reason).
func (a *Authorizer) Authorize(ctx context.Context, claims *authorization.Claims, target *authorization.CallTarget) (authorization.Result, error) {
	result := authorization.Result{Decision: authorization.DecisionAllow}
	if a.Next != nil {
		var err error
		if result, err = a.Next.Authorize(ctx, claims, target); err != nil || result.Decision != authorization.DecisionAllow {
			return result, err
		}
	}
	if err := approvalauth.Check(target.Request, identity(claims)); err != nil {
		var refused *approvalauth.RefusedError
		if errors.As(err, &refused) {
			return authorization.Result{Decision: authorization.DecisionDeny, Reason: refused.Error()}, nil
		}
		return authorization.Result{}, err
	}
	return result, nil
}

// identity is who the claims name, nil without claims.
func identity(claims *authorization.Claims) *approvalauth.Identity {
	if claims == nil {
		return nil
	}
	id := &approvalauth.Identity{Subject: claims.Subject}
	if g, ok := claims.Extensions.(GroupClaims); ok {
		id.Groups = g.ReviewerGroups()
	}
	return id
}
