package workflows

import (
	"errors"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/toolgate/toolgate/internal/safetext"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// MaxConsentRounds bounds how often one call waits for consent: each round is an attempt that
// found no token, a wait, and a wake-up (a consent, or a signal for another provider). Past it the
// call ends TOOL_EXECUTION_FAILED, so spurious signals cannot grow a history without end.
const MaxConsentRounds = 8

// consentRequired returns the request of an ExecuteTool failure of type
// wire.ErrTypeConsentRequired: the attempt did not run the tool.
func consentRequired(err error) (wire.ConsentRequest, bool) {
	var appErr *temporal.ApplicationError
	var req wire.ConsentRequest
	if !errors.As(err, &appErr) || appErr.Type() != wire.ErrTypeConsentRequired || !appErr.HasDetails() || appErr.Details(&req) != nil {
		return wire.ConsentRequest{}, false
	}
	return req, true
}

// consentWait is one call's waits for its principal's consent: the state its query returns
// (registered at the first wait) and the deadline all its rounds share.
type consentWait struct {
	state    wire.ConsentState
	rounds   int
	deadline time.Time
}

// awaitConsent holds a call whose attempt found no token of its principal for req.Provider until
// the consent endpoint signals wire.SignalConsent, the tool's ConsentTimeout (counted from the
// first wait) passes, or the call is canceled. goOn is true when the tool should be scheduled
// again; otherwise the call ends with (res, err).
//
// The wait is durable and holds no worker slot: it is a timer and a signal channel in history.
// Tokens never enter it: the signal carries the provider only, and the next attempt reads the
// token from the worker's store.
func (w *Workflows) awaitConsent(ctx workflow.Context, call toolcore.ToolCall, opts toolcore.Options, c *consentWait, req wire.ConsentRequest) (goOn bool, res toolcore.Result, err error) {
	now := workflow.Now(ctx).UTC()
	if c.rounds == 0 {
		c.deadline = now.Add(opts.ConsentTimeout)
		if err := workflow.SetQueryHandler(ctx, wire.QueryConsent, func() (wire.ConsentState, error) { return c.state, nil }); err != nil {
			return false, toolcore.Result{}, err
		}
	}
	c.rounds++
	provider, _ := safetext.Escape(req.Provider)
	if c.rounds > MaxConsentRounds {
		res, err := w.complete(ctx, call, toolcore.ErrorResult(call, toolcore.CodeToolExecutionFailed,
			"the call's principal has no token for "+provider+" after "+plural(MaxConsentRounds, "consent wait")+"; the tool did not run"))
		return false, res, err
	}
	c.state = wire.ConsentState{Waiting: true, Request: req, Since: now, Deadline: c.deadline}
	who := "no one"
	if p := principalFrom(ctx); p != nil {
		who = p.Key()
	}
	w.setDetails(ctx, consentDetails(who, req, c.deadline))
	w.upsertOutcome(ctx, call, wire.OutcomeAwaitingConsent)
	workflow.GetLogger(ctx).Info("Call waits for its principal's consent", "toolCallId", call.ID(), "toolName", call.Name(), "provider", req.Provider)

	tctx, stopTimer := workflow.WithCancel(ctx)
	defer stopTimer()
	timer := workflow.NewTimerWithOptions(tctx, c.deadline.Sub(now), workflow.TimerOptions{Summary: "consent to " + provider + " expires"})
	var sig wire.ConsentSignal
	signaled, expired := false, false
	sel := workflow.NewSelector(ctx)
	sel.AddReceive(workflow.GetSignalChannel(ctx, wire.SignalConsent), func(ch workflow.ReceiveChannel, _ bool) {
		ch.Receive(ctx, &sig)
		signaled = true
	})
	sel.AddFuture(timer, func(workflow.Future) { expired = true })
	sel.AddReceive(ctx.Done(), func(workflow.ReceiveChannel, bool) {})
	sel.Select(ctx)
	c.state.Waiting = false
	switch {
	case ctx.Err() != nil:
		res, err := w.canceled(ctx, call)
		return false, res, err
	case expired && !signaled:
		res, err := w.complete(ctx, call, toolcore.ErrorResult(call, toolcore.CodeToolExecutionFailed,
			"the call's principal did not consent to "+provider+" within "+opts.ConsentTimeout.String()+"; the tool did not run"))
		return false, res, err
	case sig.Provider == req.Provider && sig.Refused != "":
		refused, _ := safetext.Escape(sig.Refused)
		res, err := w.complete(ctx, call, toolcore.ErrorResult(call, toolcore.CodeToolExecutionFailed,
			"the call's principal refused consent to "+provider+" ("+refused+"); the tool did not run"))
		return false, res, err
	}
	w.clearOutcome(ctx)
	return true, toolcore.Result{}, nil
}

// consentDetails is the workflow's current details while it waits for consent (the Web UI shows
// them as Markdown): every part that is not toolgate's own text is escaped and in a code span, so
// nothing in a principal, provider, scope or URL renders as a link or markup.
func consentDetails(who string, req wire.ConsentRequest, deadline time.Time) string {
	scopes := ""
	if len(req.Scopes) > 0 {
		scopes = " (scopes " + safetext.CodeSpan(strings.Join(req.Scopes, " ")) + ")"
	}
	return "awaiting consent of " + safetext.CodeSpan(who) + " to " + safetext.CodeSpan(req.Provider) + scopes + ", until " +
		deadline.UTC().Format("2006-01-02T15:04:05Z") + ": the principal opens " + safetext.CodeSpan(req.URL)
}
