package toolcore

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// Principal is whom a call runs for: the end user an agent serves (Issuer and Subject are the
// identity; two principals are the same exactly when both are equal), their tenant, display name
// and groups, and the Actor, when an agent (or another service) acts for them. It encodes to
// {"issuer"?,"subject","tenant"?,"name"?,"groups"?,"actor"?,"authenticatedBy"?}
// (docs/contract.md, "Principals").
//
// AuthenticatedBy says who vouched for it: AuthenticatedByMCP (toolgate mcp verified the
// caller's OAuth token), AuthenticatedByFrontend (the Temporal frontend's claims, checked by a
// frontend authorizer with approvalauth.CheckStart), or empty: the principal is only what the
// starting client asserts. A workflow cannot tell who wrote the mark; on a cluster whose frontend
// runs approvalauth.CheckStart, a start carrying a mark its caller may not vouch for is refused.
type Principal struct {
	Issuer          string   `json:"issuer,omitempty"`
	Subject         string   `json:"subject"`
	Tenant          string   `json:"tenant,omitempty"`
	Name            string   `json:"name,omitempty"`
	Groups          []string `json:"groups,omitempty"`
	Actor           *Actor   `json:"actor,omitempty"`
	AuthenticatedBy string   `json:"authenticatedBy,omitempty"`
}

// Actor is who acts for a principal: an agent run ("agent" issuer, the run's workflow ID as
// subject, when toolgate sets it) or a service of its own.
type Actor struct {
	Issuer  string `json:"issuer,omitempty"`
	Subject string `json:"subject"`
	Name    string `json:"name,omitempty"`
}

// Values of Principal.AuthenticatedBy.
const (
	// AuthenticatedByMCP: toolgate mcp verified the caller's bearer token (issuer and subject
	// are the token's iss and sub).
	AuthenticatedByMCP = "mcp"
	// AuthenticatedByFrontend: the Temporal frontend authenticated the starting client and its
	// authorizer checked the principal against the claims (approvalauth.CheckStart).
	AuthenticatedByFrontend = "frontend"
)

// ActorIssuerAgent is the Actor.Issuer of an agent run acting for its principal: the actor's
// subject is the run's workflow ID.
const ActorIssuerAgent = "toolgate:agent"

// Bounds of a Principal (Check): it travels in every call's start (a memo) and reaches logs,
// search attributes and the UI.
const (
	MaxPrincipalFieldBytes = 256 // issuer, subject, tenant, name; each group and actor field
	MaxPrincipalGroups     = 64
)

// IsZero reports whether p names no one (no subject): the call runs for no principal.
func (p Principal) IsZero() bool { return p.Subject == "" }

// Authenticated reports whether someone vouched for p (AuthenticatedBy is set).
func (p Principal) Authenticated() bool { return p.AuthenticatedBy != "" }

// Same reports whether p and q are the same identity (issuer and subject).
func (p Principal) Same(q Principal) bool { return p.Issuer == q.Issuer && p.Subject == q.Subject }

// Key is p's identity as one string, "<issuer> <subject>" (the subject alone without an issuer):
// the unit of fair shares and budgets.
func (p Principal) Key() string {
	if p.Issuer == "" {
		return p.Subject
	}
	return p.Issuer + " " + p.Subject
}

// InGroup reports whether p carries group g.
func (p Principal) InGroup(g string) bool { return slices.Contains(p.Groups, g) }

// String is p for a human: "alice (https://idp.example), for toolgate:agent/run-1, asserted".
func (p Principal) String() string {
	if p.IsZero() {
		return "none"
	}
	var b strings.Builder
	b.WriteString(p.Subject)
	if p.Issuer != "" {
		b.WriteString(" (" + p.Issuer + ")")
	}
	if p.Tenant != "" {
		b.WriteString(", tenant " + p.Tenant)
	}
	if p.Actor != nil {
		b.WriteString(", via " + p.Actor.Subject)
	}
	if p.Authenticated() {
		b.WriteString(", authenticated by " + p.AuthenticatedBy)
	} else {
		b.WriteString(", asserted")
	}
	return b.String()
}

// Check refuses a principal that no component may carry: a missing subject (of a non-zero
// principal's actor too), a field over MaxPrincipalFieldBytes, more than MaxPrincipalGroups
// groups, an empty or repeated group, text that is not UTF-8 or holds control or invisible
// characters (the fields reach logs and the UI), an unknown AuthenticatedBy.
func (p Principal) Check() error {
	if p.Subject == "" {
		return fmt.Errorf("principal: subject is required")
	}
	for _, f := range []struct{ name, v string }{{"issuer", p.Issuer}, {"subject", p.Subject}, {"tenant", p.Tenant}, {"name", p.Name}} {
		if err := checkPrincipalField(f.name, f.v); err != nil {
			return err
		}
	}
	if len(p.Groups) > MaxPrincipalGroups {
		return fmt.Errorf("principal: %d groups, limit %d", len(p.Groups), MaxPrincipalGroups)
	}
	for i, g := range p.Groups {
		if g == "" {
			return fmt.Errorf("principal: group %d is empty", i)
		}
		if err := checkPrincipalField("group", g); err != nil {
			return err
		}
		if slices.Contains(p.Groups[:i], g) {
			return fmt.Errorf("principal: group %q is listed twice", g)
		}
	}
	if a := p.Actor; a != nil {
		if a.Subject == "" {
			return fmt.Errorf("principal: actor subject is required")
		}
		for _, f := range []struct{ name, v string }{{"actor issuer", a.Issuer}, {"actor subject", a.Subject}, {"actor name", a.Name}} {
			if err := checkPrincipalField(f.name, f.v); err != nil {
				return err
			}
		}
	}
	switch p.AuthenticatedBy {
	case "", AuthenticatedByMCP, AuthenticatedByFrontend:
	default:
		return fmt.Errorf("principal: authenticatedBy %q is not %q, %q or empty", p.AuthenticatedBy, AuthenticatedByMCP, AuthenticatedByFrontend)
	}
	return nil
}

func checkPrincipalField(name, v string) error {
	if len(v) > MaxPrincipalFieldBytes {
		return fmt.Errorf("principal: %s has %d bytes, limit %d", name, len(v), MaxPrincipalFieldBytes)
	}
	if !utf8.ValidString(v) {
		return fmt.Errorf("principal: %s is not UTF-8", name)
	}
	for _, r := range v {
		if forbiddenInLabel(r) {
			return fmt.Errorf("principal: %s holds the control or invisible character %U", name, r)
		}
	}
	return nil
}

// Clone returns a deep copy of p.
func (p Principal) Clone() Principal {
	p.Groups = slices.Clone(p.Groups)
	if p.Actor != nil {
		a := *p.Actor
		p.Actor = &a
	}
	return p
}

// CallPrincipal returns the principal the running call was made for, and false when it has none
// (or outside an execution). The tool gets its own copy.
func CallPrincipal(ctx context.Context) (Principal, bool) {
	e := executionFrom(ctx)
	if e == nil || e.Principal == nil {
		return Principal{}, false
	}
	return e.Principal.Clone(), true
}
