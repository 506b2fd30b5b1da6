package client

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	sdkclient "go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/mocks"
	"go.temporal.io/sdk/temporal"

	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// inputLook is what one read of a call finds: whether it has closed, whether its ToolOutcome says
// it waits for input, and the round its query answers (0: the query says it no longer waits).
type inputLook struct {
	closed  bool
	waiting bool
	round   int
}

// describeInput answers a DescribeWorkflowExecution for look.
func describeInput(t *testing.T, look inputLook) *workflowservice.DescribeWorkflowExecutionResponse {
	t.Helper()
	status := enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING
	if look.closed {
		status = enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED
	}
	fields := map[string]*commonpb.Payload{}
	if look.waiting {
		p, err := converter.GetDefaultDataConverter().ToPayload(wire.OutcomeAwaitingInput)
		require.NoError(t, err)
		fields[wire.SearchAttributeToolOutcome] = p
	}
	return &workflowservice.DescribeWorkflowExecutionResponse{WorkflowExecutionInfo: &workflowpb.WorkflowExecutionInfo{
		Status: status, SearchAttributes: &commonpb.SearchAttributes{IndexedFields: fields}}}
}

// InputWatch against a scripted server, one look per read: each round is delivered once however
// often it is read, and its end once (answered, replaced by the next round, or the call closed);
// a call that never waits costs no query.
func TestInputWatchDeliversEachRoundAndItsEndOnce(t *testing.T) {
	tests := []struct {
		name        string
		looks       []inputLook
		want        []string // "wait N" or "end N", in order
		wantQueries int
	}{
		{name: "never waits: no query", looks: []inputLook{{}, {}, {closed: true}}, want: nil},
		{name: "one round read three times, then answered, then the call completes",
			looks:       []inputLook{{}, {waiting: true, round: 1}, {waiting: true, round: 1}, {waiting: true, round: 1}, {}, {closed: true}},
			want:        []string{"wait 1", "end 1"},
			wantQueries: 3},
		{name: "the next round replaces the one before",
			looks:       []inputLook{{waiting: true, round: 1}, {waiting: true, round: 2}, {closed: true}},
			want:        []string{"wait 1", "end 1", "wait 2", "end 2"},
			wantQueries: 2},
		{name: "the query says the wait ended before the attribute does",
			looks:       []inputLook{{waiting: true, round: 1}, {waiting: true}, {closed: true}},
			want:        []string{"wait 1", "end 1"},
			wantQueries: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sdk := mocks.NewClient(t)
			next := 0
			var current inputLook
			sdk.On("DescribeWorkflowExecution", mock.Anything, "toolcall-c1", "").Return(
				func(context.Context, string, string) (*workflowservice.DescribeWorkflowExecutionResponse, error) {
					current = tt.looks[min(next, len(tt.looks)-1)]
					next++
					return describeInput(t, current), nil
				})
			queries := 0
			if tt.wantQueries > 0 {
				sdk.On("QueryWorkflow", mock.Anything, "toolcall-c1", "", wire.QueryInput).Return(
					func(context.Context, string, string, string, ...any) (converter.EncodedValue, error) {
						queries++
						return inputValue{Waiting: current.round != 0, Round: current.round}, nil
					})
			}
			var got []string
			w := New(sdk, Options{}).WatchInput(context.Background(), "toolcall-c1", time.Nanosecond, func(_ context.Context, st wire.InputState) error {
				verb := "end "
				if st.Waiting {
					verb = "wait "
				}
				got = append(got, verb+string(rune('0'+st.Round)))
				return nil
			})
			select {
			case <-w.Done():
			case <-time.After(time.Minute):
				t.Fatal("the watch did not end with the call")
			}
			assert.Nil(t, w.Stop(), "every round's end delivered")
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.wantQueries, queries)
		})
	}
}

// inputValue is a query's answer as the SDK hands it over.
type inputValue wire.InputState

func (v inputValue) HasValue() bool { return true }

func (v inputValue) Get(ptr any) error {
	*ptr.(*wire.InputState) = wire.InputState(v)
	return nil
}

// The round a hooked call waits in: a confirmation the hook may answer and a callback only its
// URL answers.
var (
	hookedDeadline = time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	hookedRequests = map[string]toolcore.InputRequest{
		"proceed": {Method: toolcore.MethodElicit, Params: json.RawMessage(`{"message":"proceed?"}`)},
		"paid":    {Method: toolcore.MethodCallback, Params: json.RawMessage(`{"expires":"2026-12-06T09:30:00Z","tokenSha256":"ab"}`)},
	}
)

// hookedServer scripts a call that waits in round 1 (hookedRequests) until an update is accepted,
// then completes. refuse is how many updates the validator refuses first (with refusal).
type hookedServer struct {
	t       *testing.T
	sdk     *mocks.Client
	mu      sync.Mutex
	updates []wire.InputAnswer
	done    atomic.Bool
}

func newHookedServer(t *testing.T, refuse int, refusal string) *hookedServer {
	s := &hookedServer{t: t, sdk: mocks.NewClient(t)}
	s.sdk.On("DescribeWorkflowExecution", mock.Anything, "toolcall-c1", "").Return(
		func(context.Context, string, string) (*workflowservice.DescribeWorkflowExecutionResponse, error) {
			if s.done.Load() {
				return describeInput(t, inputLook{closed: true}), nil
			}
			return describeInput(t, inputLook{waiting: true, round: 1}), nil
		})
	s.sdk.On("QueryWorkflow", mock.Anything, "toolcall-c1", "", wire.QueryInput).Return(
		func(context.Context, string, string, string, ...any) (converter.EncodedValue, error) {
			if s.done.Load() {
				return inputValue{Round: 1}, nil
			}
			return inputValue{Waiting: true, Round: 1, Requests: hookedRequests, Deadline: hookedDeadline}, nil
		}).Maybe()
	s.sdk.On("UpdateWorkflow", mock.Anything, mock.Anything).Return(
		func(_ context.Context, o sdkclient.UpdateWorkflowOptions) (sdkclient.WorkflowUpdateHandle, error) {
			assert.Equal(t, "toolcall-c1", o.WorkflowID)
			assert.Equal(t, wire.UpdateInput, o.UpdateName)
			require.Len(t, o.Args, 1)
			s.mu.Lock()
			s.updates = append(s.updates, o.Args[0].(wire.InputAnswer))
			n := len(s.updates)
			s.mu.Unlock()
			if n <= refuse {
				return nil, temporal.NewApplicationError(refusal, "")
			}
			h := mocks.NewWorkflowUpdateHandle(t)
			h.On("Get", mock.Anything, mock.Anything).Return(nil)
			s.done.Store(true)
			return h, nil
		}).Maybe()
	return s
}

func (s *hookedServer) answers() []wire.InputAnswer {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]wire.InputAnswer(nil), s.updates...)
}

// run watches the call with hook until the watch ends (the call closed) or a minute passes.
func (s *hookedServer) run(opts Options, hook func(context.Context, InputEvent) (map[string]json.RawMessage, error)) {
	opts.OnInput, opts.InputInterval = hook, time.Millisecond
	w := New(s.sdk, opts).watchInput(context.Background(), "toolcall-c1", InputEvent{WorkflowID: "toolcall-c1", ToolCallID: "c1", ToolName: "deploy"})
	select {
	case <-w.Done():
	case <-time.After(time.Minute):
		s.t.Error("the watch did not end")
	}
	w.Stop()
}

// Options.OnInput is offered each round once, without its callbacks (listed apart with their
// expiry); its answers to the round's other questions go back in one update for that round,
// answers to a callback or an unknown key never do.
func TestOnInputAnswersTheRoundWithoutCallbacks(t *testing.T) {
	s := newHookedServer(t, 0, "")
	var events []InputEvent
	s.run(Options{Principal: "alice"}, func(_ context.Context, ev InputEvent) (map[string]json.RawMessage, error) {
		events = append(events, ev)
		return map[string]json.RawMessage{
			"proceed": json.RawMessage(`{"action":"accept","content":{"confirm":true}}`),
			"paid":    json.RawMessage(`{"body":"Zm9yZ2Vk"}`),
			"other":   json.RawMessage(`{}`),
		}, nil
	})
	require.Len(t, events, 1, "one offer for the round")
	ev := events[0]
	assert.Equal(t, 1, ev.Round)
	assert.Equal(t, "deploy", ev.ToolName)
	assert.Equal(t, hookedDeadline, ev.Deadline)
	assert.Equal(t, map[string]toolcore.InputRequest{"proceed": hookedRequests["proceed"]}, ev.Requests)
	assert.Equal(t, map[string]time.Time{"paid": time.Date(2026, 12, 6, 9, 30, 0, 0, time.UTC)}, ev.Callbacks)
	assert.NoError(t, ev.Refused)
	assert.Equal(t, []wire.InputAnswer{{Round: 1, By: "alice",
		Responses: map[string]json.RawMessage{"proceed": json.RawMessage(`{"action":"accept","content":{"confirm":true}}`)}}}, s.answers())
}

// A hook that fails, or answers nothing, leaves the questions for another answerer: nothing is
// sent, and its ctx ends once the round has ended.
func TestOnInputErrorLeavesTheQuestion(t *testing.T) {
	tests := []struct {
		name string
		give error
	}{
		{name: "error", give: errors.New("no human here")},
		{name: "no answer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newHookedServer(t, 0, "")
			offered := make(chan struct{})
			go func() {
				<-offered
				s.done.Store(true) // another answerer answers; the call completes
			}()
			calls := 0
			s.run(Options{}, func(context.Context, InputEvent) (map[string]json.RawMessage, error) {
				calls++
				close(offered)
				return nil, tt.give
			})
			assert.Equal(t, 1, calls)
			assert.Empty(t, s.answers(), "nothing sent")
		})
	}
}

// An answer the call refuses is offered again with the reason, at most three times; the
// accepted retry ends the round.
func TestOnInputRefusedAnswerIsOfferedAgain(t *testing.T) {
	const refusal = `the answer to "proceed" must be a JSON object`
	tests := []struct {
		name        string
		refuse      int
		wantOffers  int
		wantUpdates int
	}{
		{name: "refused once, then accepted", refuse: 1, wantOffers: 2, wantUpdates: 2},
		{name: "refused every time: three offers, then left", refuse: 99, wantOffers: 3, wantUpdates: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newHookedServer(t, tt.refuse, refusal)
			var refused []error
			s.run(Options{}, func(_ context.Context, ev InputEvent) (map[string]json.RawMessage, error) {
				refused = append(refused, ev.Refused)
				if len(refused) == tt.wantOffers && tt.refuse > tt.wantOffers {
					defer s.done.Store(true) // left for another answerer, who answers
				}
				return map[string]json.RawMessage{"proceed": json.RawMessage(`{"action":"accept"}`)}, nil
			})
			require.Len(t, refused, tt.wantOffers)
			assert.NoError(t, refused[0])
			for _, err := range refused[1:] {
				assert.ErrorIs(t, err, ErrInputRefused)
				assert.ErrorContains(t, err, refusal)
			}
			assert.Len(t, s.answers(), tt.wantUpdates)
			for _, a := range s.answers() {
				assert.Equal(t, DefaultInputBy, a.By)
			}
		})
	}
}

// AnswerInput's errors say why: the call's refusal with its reason, a call that does not wait,
// no such call.
func TestAnswerInputErrors(t *testing.T) {
	tests := []struct {
		name       string
		give       error
		describeOK bool
		want       error
		wantText   string
	}{
		{name: "validator refusal", give: temporal.NewApplicationError(`round 1 asks no question "nope" (or it was answered)`, ""),
			want: ErrInputRefused, wantText: `answer toolcall-c1: answer refused: round 1 asks no question "nope" (or it was answered)`},
		{name: "not waiting", give: temporal.NewApplicationError("the call is not waiting for input", ""), want: ErrNotAwaitingInput},
		{name: "never asked", give: temporal.NewApplicationError(`unknown update toolgate.input. KnownUpdates=[]`, ""), want: ErrNotAwaitingInput},
		{name: "closed", give: serviceerror.NewNotFound("workflow execution already completed"), describeOK: true, want: ErrNotAwaitingInput},
		{name: "no such call", give: serviceerror.NewNotFound("workflow not found"), want: wire.ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sdk := mocks.NewClient(t)
			sdk.On("UpdateWorkflow", mock.Anything, mock.Anything).Return(nil, tt.give)
			if _, ok := tt.give.(*serviceerror.NotFound); ok {
				var describeErr error = serviceerror.NewNotFound("gone")
				if tt.describeOK {
					describeErr = nil
				}
				sdk.On("DescribeWorkflowExecution", mock.Anything, "toolcall-c1", "").Return(describeInput(t, inputLook{closed: true}), describeErr)
			}
			_, err := New(sdk, Options{}).AnswerInput(context.Background(), "c1", wire.InputAnswer{Round: 1,
				Responses: map[string]json.RawMessage{"nope": json.RawMessage(`{}`)}})
			require.ErrorIs(t, err, tt.want)
			if tt.wantText != "" {
				assert.EqualError(t, err, tt.wantText)
			}
		})
	}
}
