package client

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/api/serviceerror"

	"github.com/toolgate/toolgate/wire"
)

// A call whose tool declares a credential (toolcore.Options.Credentials) waits durably when its
// principal has not consented yet: its ToolOutcome search attribute is wire.OutcomeAwaitingConsent
// and the query wire.QueryConsent answers the wire.ConsentState with the authorization URL. The
// client reads the attribute from DescribeWorkflowExecution (free with Status) and queries only a
// call that says it waits, so a call that does not costs no query and needs no worker.

// Defaults of the consent reads.
const (
	// DefaultConsentInterval is the default of Options.ConsentInterval.
	DefaultConsentInterval = time.Second
	// ConsentQueryTimeout bounds one query of a call's consent state (Status, ConsentWatch): a
	// query waits for a worker, and Status must answer without one.
	ConsentQueryTimeout = 3 * time.Second
)

// ConsentEvent is what Options.OnConsent receives: the call Execute waits for waits for its
// principal's consent to Request (open Request.URL to give it), since Since, until Deadline.
type ConsentEvent struct {
	WorkflowID string
	ToolCallID string
	ToolName   string
	Request    wire.ConsentRequest
	Since      time.Time
	Deadline   time.Time
}

// Consent returns the wait of the call with callID for its principal's consent (the query
// wire.QueryConsent): Waiting with the request while it waits. A call that has never waited for
// consent answers a zero state (Waiting false), as does one whose wait has ended. It queries the
// workflow, so a worker must be running; Status reads the state without one when the call does
// not wait.
func (c *Client) Consent(ctx context.Context, callID string) (wire.ConsentState, error) {
	return c.ConsentByWorkflowID(ctx, c.WorkflowID(callID))
}

// ConsentByWorkflowID is Consent for a workflow ID.
func (c *Client) ConsentByWorkflowID(ctx context.Context, workflowID string) (wire.ConsentState, error) {
	v, err := c.sdk.QueryWorkflow(ctx, workflowID, "", wire.QueryConsent)
	if err != nil {
		var queryFailed *serviceerror.QueryFailed
		var notFound *serviceerror.NotFound
		switch {
		case errors.As(err, &notFound):
			return wire.ConsentState{}, fmt.Errorf("query %s: %w", workflowID, wire.ErrNotFound)
		case errors.As(err, &queryFailed) && strings.Contains(queryFailed.Error(), "unknown queryType"):
			return wire.ConsentState{}, nil // the call has not asked for consent
		}
		return wire.ConsentState{}, fmt.Errorf("query %s: %w", workflowID, err)
	}
	var st wire.ConsentState
	if err := v.Get(&st); err != nil {
		return wire.ConsentState{}, fmt.Errorf("decode consent state of %s: %w", workflowID, err)
	}
	return st, nil
}

// ConsentWatch hands one call's waits for consent to a deliver function: a state with Waiting
// true once for each new request (a new authorization URL), and, once such a wait has ended (the
// consent came and the call went on, or the call closed), the same state with Waiting false.
// Every interval it reads the call's ToolOutcome (one DescribeWorkflowExecution) and queries the
// call only while that says it waits. Execute uses it for Options.OnConsent, and package mcp for
// URL-mode elicitations.
type ConsentWatch struct{ w *waitWatch[wire.ConsentState] }

// consentWaits are the waits a ConsentWatch reads: one per authorization URL.
var consentWaits = waitKind[wire.ConsentState]{
	outcome: wire.OutcomeAwaitingConsent,
	query: func(ctx context.Context, c *Client, workflowID string) (wire.ConsentState, error) {
		qctx, cancel := context.WithTimeout(ctx, ConsentQueryTimeout)
		defer cancel()
		return c.ConsentByWorkflowID(qctx, workflowID)
	},
	waiting: func(s wire.ConsentState) bool { return s.Waiting },
	same:    func(a, b wire.ConsentState) bool { return a.Request.URL == b.Request.URL },
	ended:   func(s wire.ConsentState) wire.ConsentState { s.Waiting = false; return s },
	unknown: func(waiting bool) wire.ConsentState { return wire.ConsentState{Waiting: waiting} },
}

// WatchConsent starts reading the waits for consent of workflowID every interval (default
// DefaultConsentInterval) for deliver, which gets ctx and whose error stops the watch. Stop must
// be called.
func (c *Client) WatchConsent(ctx context.Context, workflowID string, interval time.Duration,
	deliver func(context.Context, wire.ConsentState) error) *ConsentWatch {
	if interval <= 0 {
		interval = DefaultConsentInterval
	}
	return &ConsentWatch{startWaitWatch(ctx, c, workflowID, interval, consentWaits, deliver)}
}

// Done is closed when reading has stopped: Stop was called, ctx ended, the call closed (after
// the end of its open wait was delivered) or a delivery failed.
func (w *ConsentWatch) Done() <-chan struct{} { return w.w.done }

// Stop stops reading and waits for a delivery in flight. It returns the wait delivered last when
// its end was not delivered (the call went on after the last read), else nil. A nil watch does
// nothing.
func (w *ConsentWatch) Stop() (open *wire.ConsentState) {
	if w == nil {
		return nil
	}
	return w.w.stop()
}

// watchConsent watches run for Options.OnConsent: each new request once; nil without it.
func (c *Client) watchConsent(ctx context.Context, workflowID string, ev ConsentEvent) *ConsentWatch {
	if c.opts.OnConsent == nil {
		return nil
	}
	return c.WatchConsent(ctx, workflowID, c.opts.ConsentInterval, func(_ context.Context, st wire.ConsentState) error {
		if st.Waiting {
			ev.Request, ev.Since, ev.Deadline = st.Request, st.Since, st.Deadline
			c.opts.OnConsent(ev)
		}
		return nil
	})
}

// RefuseConsentByWorkflowID tells the call of workflowID, waiting for its principal's consent to
// provider, that the principal refused (reason, e.g. "declined"): the call ends
// TOOL_EXECUTION_FAILED without running its tool. A call that waits for another provider goes on
// waiting; one that does not wait yet takes the refusal at its next wait for provider. A call
// that has ended is wire.ErrNotFound.
func (c *Client) RefuseConsentByWorkflowID(ctx context.Context, workflowID, provider, reason string) error {
	if reason == "" {
		reason = "refused"
	}
	err := c.sdk.SignalWorkflow(ctx, workflowID, "", wire.SignalConsent, wire.ConsentSignal{Provider: provider, Refused: reason})
	var notFound *serviceerror.NotFound
	if errors.As(err, &notFound) {
		return fmt.Errorf("signal %s: %w", workflowID, wire.ErrNotFound)
	}
	return err
}
