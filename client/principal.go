package client

import (
	"context"

	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

type principalCtxKey struct{}

// WithPrincipal returns a context whose Execute, Start, StartRun and ExecuteRound start their
// calls for p (docs/principals.md): recorded in the call's start (memo wire.MemoPrincipal, in
// history and the Web UI), set as the ToolSubject search attribute when the namespace defines
// it, shown by Status, and read by the tool with toolcore.CallPrincipal. Unless the context's
// priority names a fairness key, p's identity is the call's fairness key, so each principal
// gets its own fair share of a queue with fairness on.
//
// A Go client can only assert a principal: leave AuthenticatedBy empty unless the Temporal
// frontend authenticates this client and its authorizer runs approvalauth.CheckStart, which
// refuses a start whose AuthenticatedBy mark its caller may not set. Start returns the error of
// p.Check for a malformed principal; a call that attaches to an existing run keeps that run's.
func WithPrincipal(ctx context.Context, p toolcore.Principal) context.Context {
	c := p.Clone()
	return context.WithValue(ctx, principalCtxKey{}, &c)
}

// PrincipalFrom returns the principal WithPrincipal put on ctx, and false without one.
func PrincipalFrom(ctx context.Context) (toolcore.Principal, bool) {
	p, _ := ctx.Value(principalCtxKey{}).(*toolcore.Principal)
	if p == nil {
		return toolcore.Principal{}, false
	}
	return p.Clone(), true
}

// PrincipalFairnessKey is the fairness key of p's calls when nothing else names one.
func PrincipalFairnessKey(p toolcore.Principal) string {
	return wire.FairnessKeyOf("principal:" + p.Key())
}
