package mcp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/toolgate/toolgate/client"
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

type principalKey struct{}

// withPrincipal records the request's principal in ctx for the handlers.
func withPrincipal(ctx context.Context, principal string) context.Context {
	return context.WithValue(ctx, principalKey{}, principal)
}

// owner is whom the calls of a request belong to: its scoped client and workflow ID prefix.
type owner struct {
	tg     *client.Client
	prefix string // every workflow ID of the owner starts with it
}

// ownerOf returns the owner of the request whose ctx withPrincipal marked (the server's own
// without a mark), under tg's scope.
func ownerOf(ctx context.Context, tg *client.Client) owner {
	principal, _ := ctx.Value(principalKey{}).(string)
	scope := PrincipalScope(principal)
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
