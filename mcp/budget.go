package mcp

import (
	"context"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// Budgets (docs/budgets.md). Options.Budget bounds the tools/call requests of each MCP session:
// calls, cost units (each tool's toolcore.Options.Cost, from its catalog entry) and wall-clock
// time since the session's first call. A stateless (2026-07-28) request has no session: its
// budget is its principal's (the token's issuer and subject; every request without a token
// shares the server's own), for a window of WallClock from the principal's first call (without
// a WallClock, for the life of the process). A tools/call of a listed tool is charged when the
// server takes it, before it starts its call, whether it is answered at once or as a task; a
// retry with the same idempotency key counts again. One over budget starts nothing: it is
// answered with the BUDGET_EXCEEDED result (isError true) at once, a task-augmented one too. Every
// tools/call result the server answers at once carries the budget's report (limits, used,
// remaining) in _meta[wire.MCPBudgetMeta].

// MaxBudgetPrincipals bounds the principals whose stateless budgets the server keeps at once;
// a window that has ended makes room. A new principal beyond it is refused (BUDGET_EXCEEDED),
// never given a fresh budget at another's expense.
const MaxBudgetPrincipals = 100_000

// budgets holds the ledgers of one server's sessions and stateless principals.
type budgets struct {
	limits     toolcore.BudgetLimits
	invalid    bool             // limits fail Check: every call is refused
	costs      map[string]int64 // listed tools' Options.Cost
	now        func() time.Time
	mu         sync.Mutex
	sessions   map[*sdk.ServerSession]*toolcore.BudgetLedger
	principals map[string]*toolcore.BudgetLedger
}

// newBudgets returns the budgets of limits over tools; nil when limits limit nothing. Limits that
// fail BudgetLimits.Check refuse every call (fail closed).
func newBudgets(limits toolcore.BudgetLimits, tools []toolcore.ToolInfo) *budgets {
	if limits.IsZero() && limits.Check() == nil {
		return nil
	}
	costs := make(map[string]int64, len(tools))
	for _, info := range tools {
		costs[info.Name] = info.Cost
	}
	return &budgets{limits: limits, invalid: limits.Check() != nil, costs: costs, now: time.Now,
		sessions: map[*sdk.ServerSession]*toolcore.BudgetLedger{}, principals: map[string]*toolcore.BudgetLedger{}}
}

// install adds the budget's middleware to s, outermost, so it sees every tools/call before the
// task middleware starts one. A nil b installs nothing.
func (b *budgets) install(s *sdk.Server) {
	if b != nil {
		s.AddReceivingMiddleware(b.middleware)
	}
}

func (b *budgets) middleware(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		call, ok := req.(*sdk.CallToolRequest)
		if !ok || method != "tools/call" || call.Params == nil {
			return next(ctx, method, req)
		}
		cost, listed := b.costs[call.Params.Name]
		if !listed {
			return next(ctx, method, req) // not a call: the SDK answers unknown tool
		}
		ledger, refused := b.spend(ctx, call, cost)
		if refused != nil {
			return refused, nil
		}
		res, err := next(ctx, method, req)
		if out, ok := res.(*sdk.CallToolResult); ok && err == nil {
			b.mu.Lock()
			report := ledger.Report(b.now())
			b.mu.Unlock()
			if out.Meta == nil {
				out.Meta = sdk.Meta{}
			}
			out.Meta[wire.MCPBudgetMeta] = report
		}
		return res, err
	}
}

// spend charges the call to its session's (or stateless principal's) ledger, or returns the
// BUDGET_EXCEEDED result that refuses it.
func (b *budgets) spend(ctx context.Context, req *sdk.CallToolRequest, cost int64) (*toolcore.BudgetLedger, *sdk.CallToolResult) {
	now := b.now()
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.invalid {
		return nil, budgetResult(toolcore.ErrorResult(budgetCall(req), toolcore.CodeBudgetExceeded,
			"the server's budget is misconfigured; the tool did not run"), nil)
	}
	ledger, ok := b.ledger(ctx, req, now)
	if !ok {
		return nil, budgetResult(toolcore.ErrorResult(budgetCall(req), toolcore.CodeBudgetExceeded,
			"the server keeps the budgets of too many principals; try again later; the tool did not run"), nil)
	}
	if ex := ledger.Spend(req.Params.Name, cost, now); ex != nil {
		return nil, budgetResult(toolcore.BudgetExceededResult(budgetCall(req), wire.BudgetScopeMCPSession, *ex), ledger.Report(now))
	}
	return ledger, nil
}

// ledger returns the ledger of the request's session, or of its principal for a stateless
// request; false when a new principal finds no room. b.mu is held.
func (b *budgets) ledger(ctx context.Context, req *sdk.CallToolRequest, now time.Time) (*toolcore.BudgetLedger, bool) {
	if _, stateless := ctx.Value(carrierKey{}).(context.Context); stateless || req.Session == nil {
		key := PrincipalOf(nil)
		if extra := req.GetExtra(); extra != nil {
			key = PrincipalOf(extra.TokenInfo)
		}
		if l, ok := b.principals[key]; ok && !b.windowEnded(l, now) {
			return l, true
		}
		if len(b.principals) >= MaxBudgetPrincipals {
			for k, l := range b.principals {
				if b.windowEnded(l, now) {
					delete(b.principals, k)
				}
			}
			if len(b.principals) >= MaxBudgetPrincipals {
				return nil, false
			}
		}
		l := b.open(now)
		b.principals[key] = l
		return l, true
	}
	ss := req.Session
	if l, ok := b.sessions[ss]; ok {
		return l, true
	}
	l := b.open(now)
	b.sessions[ss] = l
	go func() {
		_ = ss.Wait() // the session's budget ends with it
		b.mu.Lock()
		delete(b.sessions, ss)
		b.mu.Unlock()
	}()
	return l, true
}

// windowEnded reports whether a stateless principal's budget window is over (never without a
// WallClock).
func (b *budgets) windowEnded(l *toolcore.BudgetLedger, now time.Time) bool {
	return b.limits.WallClock > 0 && now.Sub(l.Start()) >= b.limits.WallClock
}

func (b *budgets) open(now time.Time) *toolcore.BudgetLedger {
	l, _ := toolcore.NewBudgetLedger(b.limits, now) // checked: b.invalid refuses before
	return l
}

// budgetCall is the tool call a refused request would have made, for linking its result: the
// name and the idempotency key when it has one (the result's ID is not shown to MCP clients).
func budgetCall(req *sdk.CallToolRequest) toolcore.ToolCall {
	if id, _ := req.Params.Meta[IdempotencyKeyMeta].(string); id != "" {
		if call, err := toolcore.NewToolCall(id, req.Params.Name, []byte(`{}`)); err == nil {
			return call
		}
	}
	call, _ := toolcore.NewToolCall("mcp-budget", req.Params.Name, []byte(`{}`)) // a listed name is valid
	return call
}

// budgetResult is the tools/call answer of a refused call: res's content, isError true, and the
// budget's report (nil: none) in _meta.
func budgetResult(res toolcore.Result, report any) *sdk.CallToolResult {
	out := &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: res.Content()}}, IsError: true}
	if report != nil {
		out.Meta = sdk.Meta{wire.MCPBudgetMeta: report}
	}
	return out
}
