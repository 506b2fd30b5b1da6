package mcp

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// Principals. Every call and task the server creates belongs to the principal of the request
// that created it: the verified bearer token's (PrincipalOf), or, without one (stdio, an
// unauthenticated loopback listener), the server's own. The principal's scope is part of the
// workflow ID, "<client scope>/<principal scope>/toolcall-<key>", and its ToolPrincipal search
// attribute, so every toolgate mcp process enforces the binding from Temporal alone, after a
// restart too: tasks/get, tasks/result and tasks/cancel answer only for a ToolCallWorkflow under
// the caller's scope ("not found" otherwise, like an unknown ID), tasks/list lists only the
// caller's, and an idempotency key names a call in the caller's scope only.

// OwnPrincipalScope is the principal scope of requests without a token.
const OwnPrincipalScope = "mcp"

// PrincipalOf is the principal of a verified token: its issuer (TokenInfo.Extra["iss"], set by
// JWTVerifier) and subject (UserID); "" for none.
func PrincipalOf(info *auth.TokenInfo) string {
	if info == nil || info.UserID == "" {
		return ""
	}
	iss, _ := info.Extra["iss"].(string)
	return iss + "\n" + info.UserID
}

// PrincipalScope is the workflow ID scope of principal: OwnPrincipalScope for "", else "mcp-"
// and 24 hex digits of its SHA-256 (fixed length, so no scope is a prefix of another's, and the
// subject does not appear in IDs).
func PrincipalScope(principal string) string {
	if principal == "" {
		return OwnPrincipalScope
	}
	sum := sha256.Sum256([]byte(principal))
	return OwnPrincipalScope + "-" + hex.EncodeToString(sum[:12])
}

// principalKey holds the request's principal string (PrincipalOf, "" for the server's own);
// callerPrincipalKey its toolcore.Principal (callerPrincipal, zero for the server's own).
type principalKey struct{}
type callerPrincipalKey struct{}

// caller is whom a request runs for: its principal string and, for a token's, the
// toolcore.Principal its calls start with.
type caller struct {
	key       string
	principal toolcore.Principal // zero for the server's own
}

// withPrincipal records the principal of the request whose verified token is info (nil for
// none) in ctx for the handlers, its claims read as claims says.
func withPrincipal(ctx context.Context, info *auth.TokenInfo, claims PrincipalClaims) context.Context {
	ctx = context.WithValue(ctx, principalKey{}, PrincipalOf(info))
	return context.WithValue(ctx, callerPrincipalKey{}, callerPrincipal(info, claims))
}

// callerOf is the caller withPrincipal recorded in ctx: the server's own without a mark.
func callerOf(ctx context.Context) caller {
	key, _ := ctx.Value(principalKey{}).(string)
	p, _ := ctx.Value(callerPrincipalKey{}).(toolcore.Principal)
	return caller{key: key, principal: p}
}

// RequestPrincipal is the principal of the MCP request whose context ctx is (a tool handler's,
// a middleware's below the server's own): the verified token's, with AuthenticatedBy
// toolcore.AuthenticatedByMCP, or the zero Principal for the server's own (stdio, an
// unauthenticated listener).
func RequestPrincipal(ctx context.Context) toolcore.Principal {
	return callerOf(ctx).principal.Clone()
}

// TokenClaimsExtra is the auth.TokenInfo.Extra key of a verified token's claims (a
// map[string]any, as JWTVerifier sets it): the principal's tenant, name and groups are read from
// them (PrincipalClaims). A verifier of one's own may set it too.
const TokenClaimsExtra = "claims"

// Default claim names of PrincipalClaims.
const (
	DefaultGroupsClaim = "groups"
	DefaultTenantClaim = "tenant"
	DefaultNameClaim   = "name"
)

// PrincipalClaims name the token claims a principal's groups, tenant and display name are read
// from. They work at their zero value.
type PrincipalClaims struct {
	// Groups is the claim holding the groups: an array of strings, or one string. Optional:
	// default DefaultGroupsClaim.
	Groups string
	// Tenant is the claim holding the tenant, a string (Microsoft Entra: "tid"). Optional:
	// default DefaultTenantClaim.
	Tenant string
	// Name is the claim holding the display name, a string. Optional: default
	// DefaultNameClaim.
	Name string
}

func (c PrincipalClaims) withDefaults() PrincipalClaims {
	if c.Groups == "" {
		c.Groups = DefaultGroupsClaim
	}
	if c.Tenant == "" {
		c.Tenant = DefaultTenantClaim
	}
	if c.Name == "" {
		c.Name = DefaultNameClaim
	}
	return c
}

// callerPrincipal is the toolcore.Principal of a verified token (the zero Principal for none):
// issuer and subject as PrincipalOf has them, AuthenticatedBy "mcp", and the tenant, name and
// groups of its claims (TokenClaimsExtra). A claim of another type, or a value toolcore.Principal
// may not carry (over its bounds, control characters, a repeated or empty group, groups past
// toolcore.MaxPrincipalGroups), is left out: only issuer and subject are the identity, and a
// start with a malformed one fails (Principal.Check).
func callerPrincipal(info *auth.TokenInfo, claims PrincipalClaims) toolcore.Principal {
	if info == nil || info.UserID == "" {
		return toolcore.Principal{}
	}
	claims = claims.withDefaults()
	iss, _ := info.Extra["iss"].(string)
	p := toolcore.Principal{Issuer: iss, Subject: info.UserID, AuthenticatedBy: toolcore.AuthenticatedByMCP}
	all, _ := info.Extra[TokenClaimsExtra].(map[string]any)
	fits := func(q toolcore.Principal) bool { return q.Check() == nil }
	if s, ok := all[claims.Tenant].(string); ok && fits(toolcore.Principal{Subject: "x", Tenant: s}) {
		p.Tenant = s
	}
	if s, ok := all[claims.Name].(string); ok && fits(toolcore.Principal{Subject: "x", Name: s}) {
		p.Name = s
	}
	var groups []any
	switch v := all[claims.Groups].(type) {
	case []any:
		groups = v
	case string:
		groups = []any{v}
	}
	for _, g := range groups {
		s, ok := g.(string)
		if !ok || s == "" || slices.Contains(p.Groups, s) || len(p.Groups) == toolcore.MaxPrincipalGroups ||
			!fits(toolcore.Principal{Subject: "x", Groups: []string{s}}) {
			continue
		}
		p.Groups = append(p.Groups, s)
	}
	return p
}

// TokenClaims decodes the claims of a compact JWT without verifying it: for a verifier to set
// TokenClaimsExtra once it has verified token. Nil for anything but a JWT with a JSON object as
// payload.
func TokenClaims(token string) map[string]any {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return nil
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return nil
	}
	var claims map[string]any
	if json.Unmarshal(payload, &claims) != nil {
		return nil
	}
	return claims
}

// owner is whom the calls of a request belong to: its scoped client and workflow ID prefix.
type owner struct {
	tg     *client.Client
	prefix string // every workflow ID of the owner starts with it
}

// ownerOf returns the owner of the request whose ctx withPrincipal marked (the server's own
// without a mark), under tg's scope.
func ownerOf(ctx context.Context, tg *client.Client) owner {
	scope := PrincipalScope(callerOf(ctx).key)
	if base := tg.Scope(); base != "" {
		scope = base + "/" + scope
	}
	return owner{
		tg:     tg.Scoped(scope, scope),
		prefix: wire.EscapeID(scope) + "/" + wire.WorkflowIDPrefix,
	}
}

// owns reports whether workflowID is one of o's calls.
func (o owner) owns(workflowID string) bool {
	return strings.HasPrefix(workflowID, o.prefix)
}
