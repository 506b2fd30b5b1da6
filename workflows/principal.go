package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/toolgate/toolgate/internal/principalmemo"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// Principals in workflow code. A call's principal is read once from its start's memo
// (wire.MemoPrincipal), which never changes for the run, so every replay reads the same one; it
// rides in the workflow context to the steps that use it (the activity input, policy, details).

type principalKey struct{}

// withPrincipal returns ctx carrying p (nil: none) for the steps of a call.
func withPrincipal(ctx workflow.Context, p *toolcore.Principal) workflow.Context {
	return workflow.WithValue(ctx, principalKey{}, p)
}

// principalFrom returns the principal withPrincipal put in ctx, nil for none.
func principalFrom(ctx workflow.Context) *toolcore.Principal {
	p, _ := ctx.Value(principalKey{}).(*toolcore.Principal)
	return p
}

// startPrincipal reads the principal of the workflow's start: nil without the memo field, an
// error for one that does not decode or fails Principal.Check (the call then fails as
// INVALID_TOOL_CALL, nothing runs: a principal that cannot be read must not run as no one).
func (w *Workflows) startPrincipal(ctx workflow.Context) (*toolcore.Principal, error) {
	return principalmemo.Read(workflow.GetInfo(ctx).Memo, w.DataConverter)
}

// actingFor is the principal of the calls an agent run makes: the run's own (its start's memo),
// with the run as the actor unless its starter named one. Nil when the run has none.
func actingFor(ctx workflow.Context, p *toolcore.Principal) *toolcore.Principal {
	if p == nil {
		return nil
	}
	c := p.Clone()
	if c.Actor == nil {
		info := workflow.GetInfo(ctx)
		c.Actor = &toolcore.Actor{Issuer: toolcore.ActorIssuerAgent, Subject: info.WorkflowExecution.ID, Name: info.WorkflowType.Name}
	}
	return &c
}

// principalMemo is the memo of a call started for p (nil for none).
func principalMemo(p *toolcore.Principal) map[string]any {
	if p == nil {
		return nil
	}
	return map[string]any{wire.MemoPrincipal: p}
}

// agentPrincipal is the principal of the calls the agent workflow of ctx makes:
// CallOptions.Principal, else the run's own principal memo (plain JSON; set CallOptions.Principal
// for an encrypted one) with the run as the actor. Nil when it has none.
func agentPrincipal(ctx workflow.Context) (*toolcore.Principal, error) {
	if p := callOptions(ctx).Principal; p != nil {
		if err := p.Check(); err != nil {
			return nil, &toolcore.ContractError{Code: toolcore.CodeInvalidToolCall, Message: "CallOptions.Principal: " + err.Error()}
		}
		return actingFor(ctx, p), nil
	}
	p, err := principalmemo.Read(workflow.GetInfo(ctx).Memo, nil)
	if err != nil {
		return nil, &toolcore.ContractError{Code: toolcore.CodeInvalidToolCall, Message: "agent run: " + err.Error() + " (or set CallOptions.Principal)"}
	}
	return actingFor(ctx, p), nil
}
