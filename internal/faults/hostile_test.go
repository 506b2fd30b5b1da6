package faults_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/proto"

	"github.com/toolgate/toolgate/internal/faults"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// Bounds on what a history may hold besides the call itself (the workflow input and the
// activity input carry the arguments, up to toolcore.MaxCallBytes before JSON escaping).
const (
	// maxEventBytes bounds every other event: a result is at most MaxContentCodePoints code
	// points, at most 6 bytes each once JSON-escaped (\u003c), plus the envelope.
	maxEventBytes = 64 << 10
	// maxHistoryBytes bounds the sum of those events.
	maxHistoryBytes = 256 << 10
	// payloadLimit is Temporal's per-payload error limit.
	payloadLimit = 2 << 20
)

// historyFacts is what TestHostileOutputs checks in a closed call's history.
type historyFacts struct {
	activityTasks   int // ActivityTaskScheduled events
	maxAttempt      int32
	taskFailures    []string // WorkflowTaskFailed causes and messages
	largestEvent    int      // bytes, outside the input events
	otherBytes      int      // sum, outside the input events
	largestInput    int      // bytes of the largest input event
	closedEventType enumspb.EventType
}

func readHistory(t *testing.T, sdk client.Client, workflowID string) historyFacts {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var h historyFacts
	iter := sdk.GetWorkflowHistory(ctx, workflowID, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for iter.HasNext() {
		e, err := iter.Next()
		require.NoError(t, err, workflowID)
		size := proto.Size(e)
		switch e.GetEventType() {
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED, enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			h.largestInput = max(h.largestInput, size)
			if e.GetEventType() == enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED {
				h.activityTasks++
			}
			continue
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_STARTED:
			h.maxAttempt = max(h.maxAttempt, e.GetActivityTaskStartedEventAttributes().GetAttempt())
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_FAILED:
			a := e.GetWorkflowTaskFailedEventAttributes()
			h.taskFailures = append(h.taskFailures, a.GetCause().String()+": "+a.GetFailure().GetMessage())
		}
		if isClose(e) {
			h.closedEventType = e.GetEventType()
		}
		h.largestEvent = max(h.largestEvent, size)
		h.otherBytes += size
	}
	return h
}

func isClose(e *historypb.HistoryEvent) bool {
	switch e.GetEventType() {
	case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED,
		enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED,
		enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_TIMED_OUT, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW:
		return true
	}
	return false
}

// TestHostileOutputs sends oversized and pathological calls and outputs through the whole durable
// path: every call ends with its one expected outcome, the history holds no more than the bounded
// content (the call itself aside), no payload-limit failure or failed workflow task occurs, and
// no attempt repeats beyond the tool's MaxAttempts.
func TestHostileOutputs(t *testing.T) {
	f := newFixture(t, sharedDev(t))
	cl, sdk := f.client(t)
	f.startWorker(t, false)
	began := time.Now()
	fig := figures{Scenario: "hostile-input", Detail: map[string]int{}}

	ok, failed := toolcore.ErrorCode(0), toolcore.CodeToolExecutionFailed
	deep := strings.Repeat(`{"d":`, toolcore.MaxArgumentsDepth-1) + "1" + strings.Repeat("}", toolcore.MaxArgumentsDepth-1)
	// Just under MaxCallBytes, every character one the SDK's JSON converter escapes to 6 bytes.
	maxPad := strings.Repeat("<", toolcore.MaxCallBytes-200)
	tests := []struct {
		name      string
		toolName  string
		arguments string
		wantCode  toolcore.ErrorCode
		wantText  string // a substring of the content
		truncated bool   // content ends with the truncation marker
		runs      int
	}{
		{name: "8 Mi character string", toolName: faults.ToolPathological, arguments: `{"outcome":"huge-string"}`, wantCode: ok, truncated: true, runs: 1},
		{name: "200,000-entry map", toolName: faults.ToolPathological, arguments: `{"outcome":"huge-map"}`, wantCode: ok, truncated: true, runs: 1},
		{name: "10,000 levels of nesting", toolName: faults.ToolPathological, arguments: `{"outcome":"deep"}`, wantCode: ok, truncated: true, runs: 1},
		{name: "million-bit integer", toolName: faults.ToolPathological, arguments: `{"outcome":"big-int"}`, wantCode: ok, truncated: true, runs: 1},
		{name: "1 MiB of invalid UTF-8", toolName: faults.ToolPathological, arguments: `{"outcome":"invalid-utf8"}`, wantCode: ok, truncated: true, runs: 1},
		{name: "1 MiB progress message", toolName: faults.ToolPathological, arguments: `{"outcome":"huge-progress"}`, wantCode: ok, wantText: "progress reported", runs: 1},
		{name: "1 MiB error message", toolName: faults.ToolPathological, arguments: `{"outcome":"huge-error"}`, wantCode: failed, wantText: "e<e<", runs: 1},
		{name: "1 MiB panic value", toolName: faults.ToolPathological, arguments: `{"outcome":"huge-panic"}`, wantCode: failed, wantText: "p\uFFFDp", runs: 1},
		{name: "Error method panics", toolName: faults.ToolPathological, arguments: `{"outcome":"panic-error"}`, wantCode: failed, runs: 1},
		{name: "fatal error look-alike", toolName: faults.ToolPathological, arguments: `{"outcome":"lookalike"}`, wantCode: failed, runs: 1},
		{name: "unserializable output", toolName: faults.ToolPathological, arguments: `{"outcome":"unserializable"}`, wantCode: toolcore.CodeToolOutputSerializationFailed, runs: 1},
		{name: "tool ignores its context", toolName: faults.ToolPathological, arguments: `{"outcome":"hang"}`, wantCode: failed,
			wantText: fmt.Sprintf("gave up after %d attempts", faults.PathologicalAttempts), runs: faults.PathologicalAttempts},
		{name: "largest call, all escaped characters", toolName: faults.ToolReadOnly, arguments: `{"pad":"` + maxPad + `"}`, wantCode: ok, runs: 1},
		{name: "100 KiB unknown argument name", toolName: faults.ToolReadOnly, arguments: `{"` + strings.Repeat("k", 100<<10) + `":1}`,
			wantCode: toolcore.CodeToolArgumentsInvalid, runs: 0},
		{name: "deepest arguments", toolName: faults.ToolReadOnly, arguments: `{"x":` + deep + `}`, wantCode: toolcore.CodeToolArgumentsInvalid, runs: 0},
		{name: "256-byte unknown tool name", toolName: strings.Repeat("n", toolcore.MaxNameBytes), arguments: `{}`, wantCode: toolcore.CodeToolNotFound, runs: 0},
	}

	type run struct {
		res toolcore.Result
		err error
	}
	runs := make([]run, len(tests))
	calls := make([]toolcore.ToolCall, len(tests))
	var wg sync.WaitGroup
	for i, tt := range tests {
		c, err := toolcore.NewToolCall(fmt.Sprintf("hostile-%02d", i), tt.toolName, []byte(tt.arguments))
		require.NoError(t, err, tt.name)
		calls[i] = c
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), outcomeTimeout)
			defer cancel()
			runs[i].res, runs[i].err = cl.Execute(ctx, c)
		})
	}
	wg.Wait()
	tally := faults.Count(f.watch.snapshot(t))
	fig.Calls = len(tests)
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, got := calls[i], runs[i]
			if !assert.NoError(t, got.err) || !assert.True(t, linked(got.res, c), "linked result") {
				fig.Lost++
				return
			}
			assert.Equal(t, tt.wantCode, got.res.ErrorCode(), got.res.Content())
			content := got.res.Content()
			assert.True(t, utf8.ValidString(content))
			assert.LessOrEqual(t, utf8.RuneCountInString(content), toolcore.MaxContentCodePoints)
			assert.Equal(t, tt.truncated, strings.HasSuffix(content, toolcore.TruncationMarker), "truncated: %.200q", content)
			assert.Contains(t, content, tt.wantText)
			if tt.wantCode != ok {
				assert.LessOrEqual(t, utf8.RuneCountInString(got.res.ErrorMessage()), toolcore.MaxErrorTextCodePoints)
			}
			if n := tally.Of(c.ID(), faults.KindRun); n != tt.runs {
				fig.Duplicated++
				t.Errorf("%d runs, want %d", n, tt.runs)
			}

			h := readHistory(t, sdk, "toolcall-"+c.ID())
			assert.Empty(t, h.taskFailures, "no workflow task failed")
			assert.Equal(t, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED, h.closedEventType)
			assert.LessOrEqual(t, h.largestEvent, maxEventBytes, "largest event besides the inputs")
			assert.LessOrEqual(t, h.otherBytes, maxHistoryBytes, "history besides the inputs")
			assert.Less(t, h.largestInput, payloadLimit, "inputs stay below the payload limit")
			assert.LessOrEqual(t, h.activityTasks, 1)
			assert.LessOrEqual(t, int(h.maxAttempt), max(tt.runs, 1), "attempts")
			fig.Detail["largestEventBytes"] = max(fig.Detail["largestEventBytes"], h.largestEvent)
			fig.Detail["largestInputBytes"] = max(fig.Detail["largestInputBytes"], h.largestInput)
		})
	}

	t.Run("beyond the bounds nothing starts", func(t *testing.T) {
		tooDeep := strings.Repeat(`{"d":`, toolcore.MaxArgumentsDepth) + "1" + strings.Repeat("}", toolcore.MaxArgumentsDepth)
		for _, arguments := range []string{
			`{"pad":"` + strings.Repeat("x", toolcore.MaxCallBytes) + `"}`,
			`{"x":` + tooDeep + `}`,
		} {
			_, err := toolcore.NewToolCall("hostile-refused", faults.ToolReadOnly, []byte(arguments))
			var ce *toolcore.ContractError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, toolcore.CodeInvalidToolCall, ce.Code)
			fig.Calls++
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_, err := cl.Status(ctx, "hostile-refused")
		assert.ErrorIs(t, err, wire.ErrNotFound)
	})
	report(t, fig, began)
}
