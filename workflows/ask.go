package workflows

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/toolgate/toolgate/activities"
	"github.com/toolgate/toolgate/internal/safetext"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// inputRequired returns the questions of an ExecuteTool failure of type
// wire.ErrTypeInputRequired: the attempt ended asking.
func inputRequired(err error) (wire.InputRequired, bool) {
	var appErr *temporal.ApplicationError
	var req wire.InputRequired
	if !errors.As(err, &appErr) || appErr.Type() != wire.ErrTypeInputRequired || !appErr.HasDetails() || appErr.Details(&req) != nil || len(req.Requests) == 0 {
		return wire.InputRequired{}, false
	}
	return req, true
}

// inputWait is one call's rounds of questions: the state its query returns, the answers of every
// round so far (each later attempt carries them all), and the keys of the current round still
// unanswered. The update handler and validator are registered at the first round.
type inputWait struct {
	state   wire.InputState
	answers map[string]json.RawMessage
	size    int // bytes of answers
}

// awaitInput holds a call whose attempt asked req until every question is answered through
// wire.UpdateInput, the tool's InputTimeout passes, or the call is canceled. goOn is true when
// the tool should be scheduled again with in.Input set; otherwise the call ends with (res, err).
//
// The wait is durable and holds no worker slot: a timer and accepted updates in history. The next
// attempt runs the tool from its start with every answer so far and the asking attempt's
// checkpoint (toolcore.LastCheckpoint), so an Unsafe tool's effects before a question are not
// repeated when it checkpoints them (docs/talkback.md).
func (w *Workflows) awaitInput(ctx workflow.Context, call toolcore.ToolCall, opts toolcore.Options, iw *inputWait, req wire.InputRequired, in *activities.ExecuteToolInput) (goOn bool, res toolcore.Result, err error) {
	if iw.state.Round == 0 {
		if err := iw.register(ctx); err != nil {
			return false, toolcore.Result{}, err
		}
	}
	if iw.state.Round >= wire.MaxInputRounds {
		res, err := w.complete(ctx, call, toolcore.ErrorResult(call, toolcore.CodeToolExecutionFailed,
			fmt.Sprintf("the tool asked for input more than %d times; it stopped there", wire.MaxInputRounds)))
		return false, res, err
	}
	for _, k := range toolcore.InputKeys(req.Requests) { // sorted: the message names the same key on replay
		if _, answered := iw.answers[k]; answered {
			// An answered key asked again is a tool bug: it would wait for nothing forever.
			res, err := w.complete(ctx, call, toolcore.ErrorResult(call, toolcore.CodeToolExecutionFailed,
				"the tool asked "+quote(k)+" again after it was answered; ask a new key for a new question"))
			return false, res, err
		}
	}
	now := workflow.Now(ctx).UTC()
	timeout := opts.InputWait()
	iw.state = wire.InputState{Waiting: true, Round: iw.state.Round + 1, Requests: req.Requests, Since: now, Deadline: now.Add(timeout)}
	w.setDetails(ctx, inputDetails(iw.state))
	w.upsertOutcome(ctx, call, wire.OutcomeAwaitingInput)
	workflow.GetLogger(ctx).Info("Call waits for input", "toolCallId", call.ID(), "toolName", call.Name(),
		"round", iw.state.Round, "keys", toolcore.InputKeys(req.Requests))

	answered, err := workflow.AwaitWithOptions(ctx, workflow.AwaitOptions{
		Timeout:      timeout,
		TimerOptions: workflow.TimerOptions{Summary: "input for " + call.Name() + " times out"},
	}, func() bool { return len(iw.state.Requests) == 0 })
	iw.state.Waiting = false
	switch {
	case ctx.Err() != nil || (err != nil && temporal.IsCanceledError(err)):
		res, err := w.canceled(ctx, call)
		return false, res, err
	case err != nil:
		return false, toolcore.Result{}, err
	case !answered:
		res, err := w.complete(ctx, call, toolcore.ErrorResult(call, toolcore.CodeToolExecutionFailed,
			"no answer to "+strings.Join(quoteAll(toolcore.InputKeys(iw.state.Requests)), ", ")+" within "+timeout.String()+"; the tool stopped there"))
		return false, res, err
	}
	in.Input = &activities.InputResumption{Responses: iw.answers, Checkpoint: req.Checkpoint}
	w.clearOutcome(ctx)
	return true, toolcore.Result{}, nil
}

// register installs the query and the update handler of the call's questions.
func (iw *inputWait) register(ctx workflow.Context) error {
	if err := workflow.SetQueryHandler(ctx, wire.QueryInput, func() (wire.InputState, error) { return iw.state, nil }); err != nil {
		return err
	}
	return workflow.SetUpdateHandlerWithOptions(ctx, wire.UpdateInput,
		func(ctx workflow.Context, a wire.InputAnswer) (wire.InputAccepted, error) {
			if err := iw.check(a); err != nil { // the state may have moved on since validation
				return wire.InputAccepted{}, err
			}
			if iw.answers == nil {
				iw.answers = map[string]json.RawMessage{}
			}
			for _, k := range keysOf(a.Responses) {
				iw.answers[k] = a.Responses[k]
				iw.size += len(a.Responses[k])
				delete(iw.state.Requests, k)
			}
			workflow.GetLogger(ctx).Info("Input answered", "round", iw.state.Round, "keys", keysOf(a.Responses), "by", a.By)
			return wire.InputAccepted{Round: iw.state.Round, Remaining: toolcore.InputKeys(iw.state.Requests)}, nil
		},
		workflow.UpdateHandlerOptions{
			Validator: func(_ workflow.Context, a wire.InputAnswer) error { return iw.check(a) },
			Description: `answer the questions of the waiting call's tool (query "` + wire.QueryInput + `"): ` +
				`{"round":N,"responses":{"<key>":{...MCP result...}}}`,
		})
}

// Refusals of the input validator.
var errNotAsking = errors.New("the call is not waiting for input")

// check is the update validator: it only reads the state. It refuses an answer when the call
// does not wait, for another round, with no answer or an unknown, answered or malformed one, too
// large, or, for a callback question, without the token of its URL.
func (iw *inputWait) check(a wire.InputAnswer) error {
	if !iw.state.Waiting {
		return errNotAsking
	}
	if a.Round != 0 && a.Round != iw.state.Round {
		return fmt.Errorf("the answer is for round %d, the call waits in round %d", a.Round, iw.state.Round)
	}
	if len(a.Responses) == 0 {
		return errors.New(`"responses" must answer at least one question`)
	}
	if len(a.By) > wire.MaxReviewerBytes {
		return fmt.Errorf(`"by" has %d bytes, limit %d`, len(a.By), wire.MaxReviewerBytes)
	}
	size := iw.size
	for _, k := range keysOf(a.Responses) {
		v := a.Responses[k]
		q, ok := iw.state.Requests[k]
		switch {
		case !ok:
			return fmt.Errorf("round %d asks no question %s (or it was answered)", iw.state.Round, quote(k))
		case len(v) > toolcore.MaxInputResponseBytes:
			return fmt.Errorf("the answer to %s has %d bytes, limit %d", quote(k), len(v), toolcore.MaxInputResponseBytes)
		case !json.Valid(v) || len(v) == 0 || v[0] != '{':
			return fmt.Errorf("the answer to %s must be a JSON object", quote(k))
		}
		if err := checkCallbackToken(q, a.CallbackToken); err != nil {
			return fmt.Errorf("the answer to %s: %w", quote(k), err)
		}
		size += len(v)
	}
	if size > toolcore.MaxInputResponsesBytes {
		return fmt.Errorf("the call's answers would have %d bytes, limit %d", size, toolcore.MaxInputResponsesBytes)
	}
	return nil
}

// checkCallbackToken refuses an answer to a callback question unless token is its URL's (the
// question records the token's SHA-256 only), and a token for any other question: a callback
// answers its own question and nothing else.
func checkCallbackToken(q toolcore.InputRequest, token string) error {
	if q.Method != toolcore.MethodCallback {
		if token != "" {
			return errors.New("a callback token answers only its callback")
		}
		return nil
	}
	var p toolcore.CallbackParams
	if json.Unmarshal(q.Params, &p) != nil || p.TokenSHA256 == "" {
		return errors.New("the callback's question is malformed")
	}
	sum := sha256.Sum256([]byte(token))
	if token == "" || hex.EncodeToString(sum[:]) != p.TokenSHA256 {
		return errors.New("only a request to the callback's URL answers it")
	}
	return nil
}

// inputDetails is the workflow's current details while it waits for input: each question's key
// and method, and an elicitation's message, escaped in code spans.
func inputDetails(s wire.InputState) string {
	var b strings.Builder
	fmt.Fprintf(&b, "awaiting input (round %d), until %s:", s.Round, s.Deadline.UTC().Format(time.RFC3339))
	for _, k := range toolcore.InputKeys(s.Requests) {
		q := s.Requests[k]
		b.WriteString("\n- " + safetext.CodeSpan(k) + " " + safetext.CodeSpan(q.Method))
		if q.Method == toolcore.MethodElicit {
			var el toolcore.Elicitation
			if json.Unmarshal(q.Params, &el) == nil && el.Message != "" {
				b.WriteString(": " + safetext.CodeSpan(firstRunes(el.Message, 200)))
			}
		}
	}
	return b.String()
}

// keysOf returns m's keys sorted.
func keysOf(m map[string]json.RawMessage) []string { return slices.Sorted(maps.Keys(m)) }

// firstRunes is s cut to n code points, with an ellipsis when cut.
func firstRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}

// quoteAll quotes each of ss.
func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = quote(s)
	}
	return out
}
