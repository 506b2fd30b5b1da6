package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// A call whose tool asks for input (toolcore.Ask, Elicit, Confirm, Sample, ListRoots, Callback)
// waits durably, holding no worker slot: its ToolOutcome search attribute is
// wire.OutcomeAwaitingInput and the query wire.QueryInput answers the wire.InputState with the
// questions of the current round. The update wire.UpdateInput answers them; once every question
// of the round is answered the tool runs again with the answers. As with consent, the client
// reads the attribute from DescribeWorkflowExecution and queries only a call that says it waits.
//
// Questions of method toolcore.MethodCallback are answered only by a request to the URL the tool
// handed out: they are shown (with their expiry) and never offered to a hook or a prompt.

// Defaults of the input reads.
const (
	// DefaultInputInterval is the default of Options.InputInterval.
	DefaultInputInterval = time.Second
	// InputQueryTimeout bounds one query of a call's input state (Status, InputWatch): a query
	// waits for a worker, and Status must answer without one.
	InputQueryTimeout = 3 * time.Second
	// maxInputHookTries bounds how often one round is offered to Options.OnInput when the call
	// refuses its answers (a malformed or oversized answer): then the questions are left for
	// another answerer.
	maxInputHookTries = 3
	// DefaultInputBy is InputAnswer.By of the answers Options.OnInput gives on a client without
	// Options.Principal.
	DefaultInputBy = "client"
)

// InputEvent is what Options.OnInput receives: the call Execute waits for asks the questions of
// Round, since Since, until Deadline.
type InputEvent struct {
	WorkflowID string
	ToolCallID string
	ToolName   string
	Round      int
	// Requests are the questions the hook may answer, by key: elicitations, sampling requests,
	// roots. Empty for a round of callbacks only.
	Requests map[string]toolcore.InputRequest
	// Callbacks are the round's questions only an external system answers (toolcore.Callback),
	// by key, with when each URL expires: for display, never for an answer.
	Callbacks map[string]time.Time
	Since     time.Time
	Deadline  time.Time
	// Refused is why the call refused the answers the hook gave this round before (wrapping
	// ErrInputRefused), when it is offered the round again; nil the first time.
	Refused error
}

// SplitInputRequests separates the questions a hook, a prompt or an operator may answer from the
// callbacks only their URL answers (with when each expires; zero when its params do not say).
func SplitInputRequests(requests map[string]toolcore.InputRequest) (answerable map[string]toolcore.InputRequest, callbacks map[string]time.Time) {
	answerable = map[string]toolcore.InputRequest{}
	callbacks = map[string]time.Time{}
	for k, q := range requests {
		if q.Method != toolcore.MethodCallback {
			answerable[k] = q
			continue
		}
		var p toolcore.CallbackParams
		_ = json.Unmarshal(q.Params, &p) // malformed: shown without an expiry
		callbacks[k] = p.Expires
	}
	return answerable, callbacks
}

// Input returns the wait of the call with callID for answers to its tool's questions (the query
// wire.QueryInput): Waiting with the questions still unanswered while it waits. A call that has
// never asked answers a zero state (Waiting false), as does one whose wait has ended. It queries
// the workflow, so a worker must be running; Status reads the state without one when the call
// does not wait.
func (c *Client) Input(ctx context.Context, callID string) (wire.InputState, error) {
	return c.InputByWorkflowID(ctx, c.WorkflowID(callID))
}

// InputByWorkflowID is Input for a workflow ID.
func (c *Client) InputByWorkflowID(ctx context.Context, workflowID string) (wire.InputState, error) {
	v, err := c.sdk.QueryWorkflow(ctx, workflowID, "", wire.QueryInput)
	if err != nil {
		var queryFailed *serviceerror.QueryFailed
		var notFound *serviceerror.NotFound
		switch {
		case errors.As(err, &notFound):
			return wire.InputState{}, fmt.Errorf("query %s: %w", workflowID, wire.ErrNotFound)
		case errors.As(err, &queryFailed) && strings.Contains(queryFailed.Error(), "unknown queryType"):
			return wire.InputState{}, nil // the call's tool has not asked
		}
		return wire.InputState{}, fmt.Errorf("query %s: %w", workflowID, err)
	}
	var st wire.InputState
	if err := v.Get(&st); err != nil {
		return wire.InputState{}, fmt.Errorf("decode input state of %s: %w", workflowID, err)
	}
	return st, nil
}

// AnswerInput answers questions of the call with callID (the update wire.UpdateInput) and waits
// until the call has recorded the answers: a.Responses by key, each the JSON result of the MCP
// request asked (an ElicitResult such as {"action":"accept","content":{"confirm":true}}, a
// CreateMessageResult, a ListRootsResult). Set a.Round to the round read with Input, so an
// answer never reaches a later round's question of the same key (0 answers whatever round
// waits). The result lists the round's keys still unanswered; the tool runs again once none is.
//
// A call that does not wait for input (it never asked, its questions were answered, it ended)
// is ErrNotAwaitingInput; one that refuses the answer (another round, an unknown or answered
// key, not a JSON object, too large, a callback's key) is ErrInputRefused with the call's reason;
// no such call is wire.ErrNotFound.
func (c *Client) AnswerInput(ctx context.Context, callID string, a wire.InputAnswer) (wire.InputAccepted, error) {
	return c.AnswerInputByWorkflowID(ctx, c.WorkflowID(callID), a)
}

// AnswerInputByWorkflowID is AnswerInput for a workflow ID.
func (c *Client) AnswerInputByWorkflowID(ctx context.Context, workflowID string, a wire.InputAnswer) (wire.InputAccepted, error) {
	handle, err := c.sdk.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID:   workflowID,
		UpdateName:   wire.UpdateInput,
		Args:         []any{a},
		WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	var accepted wire.InputAccepted
	if err == nil {
		err = handle.Get(ctx, &accepted)
	}
	if err == nil {
		return accepted, nil
	}
	var notFound *serviceerror.NotFound
	if errors.As(err, &notFound) {
		// An update to a closed workflow is NotFound too: the call exists but no longer waits.
		if _, derr := c.describe(ctx, workflowID); derr == nil {
			return wire.InputAccepted{}, fmt.Errorf("answer %s: %w", workflowID, ErrNotAwaitingInput)
		}
	}
	return wire.InputAccepted{}, answerError(workflowID, err)
}

// answerError maps what an input update returned to the client's errors.
func answerError(workflowID string, err error) error {
	var notFound *serviceerror.NotFound
	var appErr *temporal.ApplicationError
	switch {
	case errors.As(err, &notFound):
		return fmt.Errorf("answer %s: %w", workflowID, wire.ErrNotFound)
	case errors.As(err, &appErr) && (strings.Contains(appErr.Message(), "unknown update") ||
		strings.Contains(appErr.Message(), "not waiting for input")):
		return fmt.Errorf("answer %s: %w", workflowID, ErrNotAwaitingInput)
	case errors.As(err, &appErr):
		return fmt.Errorf("answer %s: %w: %s", workflowID, ErrInputRefused, appErr.Message())
	}
	return fmt.Errorf("answer %s: %w", workflowID, err)
}

// InputWatch hands one call's rounds of questions to a deliver function: a state with Waiting
// true once for each round, and, once that round has ended (answered, timed out, or the call
// closed), the same state with Waiting false. Every interval it reads the call's ToolOutcome
// (one DescribeWorkflowExecution) and queries the call only while that says it waits. Execute
// uses it for Options.OnInput.
type InputWatch struct{ w *waitWatch[wire.InputState] }

// inputWaits are the waits an InputWatch reads: one per round.
var inputWaits = waitKind[wire.InputState]{
	outcome: wire.OutcomeAwaitingInput,
	query: func(ctx context.Context, c *Client, workflowID string) (wire.InputState, error) {
		qctx, cancel := context.WithTimeout(ctx, InputQueryTimeout)
		defer cancel()
		return c.InputByWorkflowID(qctx, workflowID)
	},
	waiting:   func(s wire.InputState) bool { return s.Waiting },
	same:      func(a, b wire.InputState) bool { return a.Round == b.Round },
	ended:     func(s wire.InputState) wire.InputState { s.Waiting = false; return s },
	unknown:   func(waiting bool) wire.InputState { return wire.InputState{Waiting: waiting} },
	readFirst: true,
}

// WatchInput starts reading the rounds of questions of workflowID every interval (default
// DefaultInputInterval) for deliver, which gets ctx and whose error stops the watch. Stop must
// be called.
func (c *Client) WatchInput(ctx context.Context, workflowID string, interval time.Duration,
	deliver func(context.Context, wire.InputState) error) *InputWatch {
	if interval <= 0 {
		interval = DefaultInputInterval
	}
	return &InputWatch{startWaitWatch(ctx, c, workflowID, interval, inputWaits, deliver)}
}

// Done is closed when reading has stopped: Stop was called, ctx ended, the call closed (after
// the end of its open round was delivered) or a delivery failed.
func (w *InputWatch) Done() <-chan struct{} { return w.w.done }

// Stop stops reading and waits for a delivery in flight (and, for Options.OnInput, the hook in
// flight). It returns the round delivered last when its end was not delivered (the call went on
// after the last read), else nil. A nil watch does nothing.
func (w *InputWatch) Stop() (open *wire.InputState) {
	if w == nil {
		return nil
	}
	return w.w.stop()
}

// watchInput watches the call of Execute for Options.OnInput: each round is offered to the hook,
// in a goroutine of its own whose ctx ends with the round, and its answers sent back; nil
// without the hook.
func (c *Client) watchInput(ctx context.Context, workflowID string, ev InputEvent) *InputWatch {
	if c.opts.OnInput == nil {
		return nil
	}
	var current *inputHook // owned by the watch's deliveries, then by Stop
	w := c.WatchInput(ctx, workflowID, c.opts.InputInterval, func(ctx context.Context, st wire.InputState) error {
		current.stop() // the round it answers has ended
		current = nil
		if st.Waiting {
			round := ev
			round.Round, round.Since, round.Deadline = st.Round, st.Since, st.Deadline
			round.Requests, round.Callbacks = SplitInputRequests(st.Requests)
			current = c.startInputHook(ctx, round)
		}
		return nil
	})
	w.w.after = func() { current.stop() }
	return w
}

// inputHook is one round offered to Options.OnInput.
type inputHook struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// stop ends the hook's ctx and waits for it to return. A nil hook does nothing.
func (h *inputHook) stop() {
	if h == nil {
		return
	}
	h.cancel()
	<-h.done
}

// startInputHook offers ev to Options.OnInput and sends the answers back: only those to ev's
// Requests. A hook error, no answer, or ctx ending leaves the questions for another answerer; an
// answer the call refuses is offered again with Refused set, at most maxInputHookTries times.
func (c *Client) startInputHook(ctx context.Context, ev InputEvent) *inputHook {
	hctx, cancel := context.WithCancel(ctx)
	h := &inputHook{cancel: cancel, done: make(chan struct{})}
	by := c.opts.Principal
	if by == "" {
		by = DefaultInputBy
	}
	go func() {
		defer close(h.done)
		for range maxInputHookTries {
			answers, err := c.opts.OnInput(hctx, ev)
			if err != nil || hctx.Err() != nil {
				return
			}
			mine := map[string]json.RawMessage{}
			for k, v := range answers {
				if _, asked := ev.Requests[k]; asked {
					mine[k] = v
				}
			}
			if len(mine) == 0 {
				return
			}
			_, err = c.AnswerInputByWorkflowID(hctx, ev.WorkflowID, wire.InputAnswer{Round: ev.Round, Responses: mine, By: by})
			if !errors.Is(err, ErrInputRefused) {
				return
			}
			ev.Refused = err
		}
	}()
	return h
}
