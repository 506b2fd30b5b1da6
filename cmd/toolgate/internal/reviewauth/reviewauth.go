// Package reviewauth is the frontend authorizer that ties what callers say about identities to
// the caller the frontend authenticated:
//
//   - toolgate's approval decisions (approvalauth.Check): a decision (the approve or reject
//     Update) passes only when its reviewer is the claims' subject, its issuer the issuer the
//     claims vouch for, and its groups are groups the claim mapper vouches for ([GroupClaims]);
//   - starts carrying a principal (approvalauth.CheckStart): a principal marked
//     authenticatedBy "frontend" passes only when it is the caller's own identity, one marked
//     "mcp" only from a caller that delegates (toolgate mcp's own identity: [DelegationClaims],
//     Authorizer.Delegates, or the system admin role); an unmarked one is asserted and passes.
//
// Every other request is left to the wrapped authorizer. The embedded server takes it as
// devserver.Options.Authorizer; a self-hosted server build passes it (or its own authorizer
// calling approvalauth.Check and approvalauth.CheckStart) to temporal.WithAuthorizer.
package reviewauth

import (
	"context"
	"errors"
	"slices"

	"go.temporal.io/server/common/authorization"

	"github.com/toolgate/toolgate/approvalauth"
)

// GroupClaims is what a claim mapper's Claims.Extensions implements to vouch for the subject's
// groups; a decision or frontend-marked principal naming a group the claims do not carry is
// refused (with the server's own JWT claim mapper, which sets no Extensions, every one that names
// a group is).
type GroupClaims interface {
	ReviewerGroups() []string
}

// IssuerClaims is what a claim mapper's Claims.Extensions implements to vouch for the issuer of
// the subject (a JWT's iss); it wins over Authorizer.Issuer.
type IssuerClaims interface {
	Issuer() string
}

// TenantClaims is what a claim mapper's Claims.Extensions implements to vouch for the subject's
// tenant; a frontend-marked principal naming another tenant is refused.
type TenantClaims interface {
	Tenant() string
}

// DelegationClaims is what a claim mapper's Claims.Extensions implements to let a caller start
// calls for principals toolgate mcp authenticated (marked authenticatedBy "mcp"): Delegates
// reports true for toolgate mcp's own identity (say, a token carrying the permission
// "toolgate:delegate"), false for everyone else.
type DelegationClaims interface {
	Delegates() bool
}

// Authorizer checks decisions and principals, then asks Next.
type Authorizer struct {
	// Next decides every request first (a decision or start must pass both). Optional: default
	// nil allows everything else, as a server without an authorizer does.
	Next authorization.Authorizer
	// Issuer is the issuer of every subject the claim mapper maps, for a claim mapper that
	// accepts the tokens of one issuer only and does not say which (the server's JWT claim
	// mapper): decisions and frontend-marked principals must then name it. Claims whose
	// Extensions implement IssuerClaims name their own. Optional: default none (a decision or
	// frontend-marked principal naming an issuer is refused).
	Issuer string
	// Delegates are the subjects that may start calls for principals toolgate mcp authenticated
	// (toolgate mcp's own identity), besides claims whose Extensions implement DelegationClaims
	// and the system admin role. Optional: default none.
	Delegates []string
}

// New returns an Authorizer that wraps next (nil: allow all other requests).
func New(next authorization.Authorizer) *Authorizer {
	return &Authorizer{Next: next}
}

var _ authorization.Authorizer = (*Authorizer)(nil)

// Authorize implements authorization.Authorizer: a decision the claims do not name, or a start
// whose principal the caller may not vouch for, is denied with the reason (the caller reads it as
// a PermissionDenied error's Reason).
func (a *Authorizer) Authorize(ctx context.Context, claims *authorization.Claims, target *authorization.CallTarget) (authorization.Result, error) {
	result := authorization.Result{Decision: authorization.DecisionAllow}
	if a.Next != nil {
		var err error
		if result, err = a.Next.Authorize(ctx, claims, target); err != nil || result.Decision != authorization.DecisionAllow {
			return result, err
		}
	}
	id := a.identity(claims)
	for _, check := range []func(any, *approvalauth.Identity) error{approvalauth.Check, approvalauth.CheckStart} {
		if err := check(target.Request, id); err != nil {
			var refused *approvalauth.RefusedError
			if errors.As(err, &refused) {
				return authorization.Result{Decision: authorization.DecisionDeny, Reason: refused.Error()}, nil
			}
			return authorization.Result{}, err
		}
	}
	return result, nil
}

// identity is who the claims name, nil without claims.
func (a *Authorizer) identity(claims *authorization.Claims) *approvalauth.Identity {
	if claims == nil {
		return nil
	}
	id := &approvalauth.Identity{
		Subject:   claims.Subject,
		Issuer:    a.Issuer,
		Delegates: claims.Subject != "" && slices.Contains(a.Delegates, claims.Subject),
		Admin:     claims.System&authorization.RoleAdmin != 0,
	}
	if g, ok := claims.Extensions.(GroupClaims); ok {
		id.Groups = g.ReviewerGroups()
	}
	if i, ok := claims.Extensions.(IssuerClaims); ok {
		id.Issuer = i.Issuer()
	}
	if t, ok := claims.Extensions.(TenantClaims); ok {
		id.Tenant = t.Tenant()
	}
	if d, ok := claims.Extensions.(DelegationClaims); ok && d.Delegates() {
		id.Delegates = true
	}
	return id
}
