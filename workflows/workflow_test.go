package workflows_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/toolgate/toolgate/activities"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
	"github.com/toolgate/toolgate/workflows"
)

func TestToolCallWorkflowOutcomes(t *testing.T) {
	reg := newRegistry(t, hostileTools(t)...)
	errorWire := func(raw json.RawMessage, code toolcore.ErrorCode, msg string) string {
		return resultJSON(t, toolcore.ErrorResult(mustCall(t, raw), code, msg))
	}
	lookalike := temporal.NewNonRetryableApplicationError("stop the run", "NonRecoverableToolError", nil)
	tests := []struct {
		name         string
		give         json.RawMessage
		want         string
		wantAttempts int
		wantOutcome  string
	}{
		{
			name:         "accepted",
			give:         call("call-add-1", "add", `{"left":20,"right":22}`),
			want:         `{"id":"tool-result-call-add-1","role":"toolResult","toolCallId":"call-add-1","toolName":"add","content":"{\"sum\":42}","isError":false}`,
			wantAttempts: 1,
			wantOutcome:  "ok",
		},
		{
			name:         "rejected",
			give:         call("call-add-2", "add", `{"left":"x","right":22}`),
			want:         `{"id":"tool-result-call-add-2","role":"toolResult","toolCallId":"call-add-2","toolName":"add","content":"{\"error\":{\"code\":\"TOOL_ARGUMENTS_INVALID\",\"message\":\"left must be a number\"}}","isError":true}`,
			wantOutcome:  "TOOL_ARGUMENTS_INVALID",
			wantAttempts: 0,
		},
		{
			name:        "unknown tool",
			give:        call("call-x", "nope", `{}`),
			want:        errorWire(call("call-x", "nope", `{}`), toolcore.CodeToolNotFound, toolcore.UnknownToolOnQueueMessage("nope", wire.DefaultTaskQueue, reg.Names())),
			wantOutcome: "TOOL_NOT_FOUND",
		},
		{
			name:        "validator panic",
			give:        call("c1", "validator_panic", `{}`),
			want:        errorWire(call("c1", "validator_panic", `{}`), toolcore.CodeToolValidationFailed, "boom in validator"),
			wantOutcome: "TOOL_VALIDATION_FAILED",
		},
		{
			name:        "validator without decision",
			give:        call("c1", "validator_zero", `{}`),
			want:        errorWire(call("c1", "validator_zero", `{}`), toolcore.CodeToolValidationFailed, "validator returned no decision (use Accept or Reject)"),
			wantOutcome: "TOOL_VALIDATION_FAILED",
		},
		{
			name:         "tool error",
			give:         call("c1", "tool_error", `{}`),
			want:         errorWire(call("c1", "tool_error", `{}`), toolcore.CodeToolExecutionFailed, "upstream said no"),
			wantAttempts: 1,
			wantOutcome:  "TOOL_EXECUTION_FAILED",
		},
		{
			name:         "tool panic",
			give:         call("c1", "tool_panic", `{}`),
			want:         errorWire(call("c1", "tool_panic", `{}`), toolcore.CodeToolExecutionFailed, "tool exploded"),
			wantAttempts: 1,
			wantOutcome:  "TOOL_EXECUTION_FAILED",
		},
		{
			name:         "tool goexit",
			give:         call("c1", "tool_goexit", `{}`),
			want:         errorWire(call("c1", "tool_goexit", `{}`), toolcore.CodeToolExecutionFailed, "tool exited without returning (runtime.Goexit)"),
			wantAttempts: 1,
			wantOutcome:  "TOOL_EXECUTION_FAILED",
		},
		{
			name:         "look-alike ApplicationError is an ordinary error",
			give:         call("c1", "lookalike_application", `{}`),
			want:         errorWire(call("c1", "lookalike_application", `{}`), toolcore.CodeToolExecutionFailed, toolcore.ErrorText(lookalike)),
			wantAttempts: 1,
			wantOutcome:  "TOOL_EXECUTION_FAILED",
		},
		{
			name:         "look-alike from another package is an ordinary error",
			give:         call("c1", "lookalike_foreign", `{}`),
			want:         errorWire(call("c1", "lookalike_foreign", `{}`), toolcore.CodeToolExecutionFailed, "foreign fatal"),
			wantAttempts: 1,
			wantOutcome:  "TOOL_EXECUTION_FAILED",
		},
		{
			name:         "contract error from a tool is an ordinary error",
			give:         call("c1", "lookalike_contract", `{}`),
			want:         errorWire(call("c1", "lookalike_contract", `{}`), toolcore.CodeToolExecutionFailed, toolcore.ErrorText(&toolcore.ContractError{Code: toolcore.CodeInvalidToolCall, Message: "tool minted a contract error"})),
			wantAttempts: 1,
			wantOutcome:  "TOOL_EXECUTION_FAILED",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := runWorkflow(t, reg, tt.give, runOptions{workflows: workflows.Workflows{SearchAttributes: true}})
			require.NoError(t, got.err)
			assert.Equal(t, tt.want, resultJSON(t, got.result))
			assert.Equal(t, tt.wantAttempts, got.attempts, "ExecuteTool attempts")
			assert.Equal(t, tt.wantOutcome, got.outcome)
			assert.Equal(t, 1, got.upserts)
			c := mustCall(t, tt.give)
			assert.Equal(t, c.Name(), got.toolName)
			assert.Equal(t, c.ID(), got.callID)
		})
	}
}

// A TOOL_NOT_FOUND result recorded by a worker names the task queue the call ran on and the
// tools that worker has (sorted, at most 20, then "and N more"), so a call started on the wrong
// queue is diagnosable from its result alone; nothing is scheduled.
func TestToolCallWorkflowNotFoundNamesQueueAndTools(t *testing.T) {
	named := func(names ...string) []toolcore.Tool {
		tools := make([]toolcore.Tool, 0, len(names))
		for _, name := range names {
			tools = append(tools, returningWith(toolcore.Options{}, name, "ok", nil))
		}
		return tools
	}
	var many []string
	for i := 23; i > 0; i-- { // registered out of order; listed sorted
		many = append(many, fmt.Sprintf("tool_%02d", i))
	}
	tests := []struct {
		name        string
		queue       string
		tools       []toolcore.Tool
		wantMessage string
	}{
		{
			name:        "a few tools",
			queue:       "weather",
			tools:       named("echo", "add", "lookup"),
			wantMessage: `Unknown Tool "forecast" on task queue "weather"; this worker has: add, echo, lookup`,
		},
		{
			name:        "no tools",
			queue:       "empty",
			wantMessage: `Unknown Tool "forecast" on task queue "empty"; this worker has no tools`,
		},
		{
			name:  "more than 20 tools",
			queue: "big",
			tools: named(many...),
			wantMessage: `Unknown Tool "forecast" on task queue "big"; this worker has: ` +
				"tool_01, tool_02, tool_03, tool_04, tool_05, tool_06, tool_07, tool_08, tool_09, tool_10, " +
				"tool_11, tool_12, tool_13, tool_14, tool_15, tool_16, tool_17, tool_18, tool_19, tool_20 and 3 more",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			give := call("c1", "forecast", `{}`)
			got := runWorkflow(t, newRegistry(t, tt.tools...), give, runOptions{
				workflows: workflows.Workflows{SearchAttributes: true},
				setup: func(env *testsuite.TestWorkflowEnvironment) {
					env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: "toolcall-c1", TaskQueue: tt.queue})
				},
			})
			require.NoError(t, got.err)
			assert.Equal(t, toolcore.CodeToolNotFound, got.result.ErrorCode())
			assert.Equal(t, tt.wantMessage, got.result.ErrorMessage())
			assert.Equal(t, "c1", got.result.ToolCallID())
			assert.Equal(t, "TOOL_NOT_FOUND", got.outcome)
			assert.Zero(t, got.attempts, "nothing is scheduled")
		})
	}
}

func TestToolCallWorkflowSearchAttributesOff(t *testing.T) {
	reg := newRegistry(t, addTool())
	got := runWorkflow(t, reg, call("c1", "add", `{"left":1,"right":2}`), runOptions{})
	require.NoError(t, got.err)
	assert.Equal(t, `{"sum":3}`, got.result.Content())
	assert.Zero(t, got.upserts, "no search attribute may be upserted unless the namespace has them")
}

func TestToolCallWorkflowBlockingValidator(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	reg := newRegistry(t, validating("blocks", func(toolcore.Arguments) toolcore.Decision[empty] {
		<-release
		return toolcore.Accept(empty{})
	}))
	tests := []struct {
		name string
		give time.Duration
		want string
	}{
		{name: "configured", give: 20 * time.Millisecond, want: "20ms"},
		{name: "default", give: 0, want: "500ms"},
		{name: "capped below the deadlock detector", give: 10 * time.Second, want: "800ms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := runWorkflow(t, reg, call("c1", "blocks", `{}`), runOptions{
				workflows: workflows.Workflows{ValidateTimeout: tt.give},
			})
			require.NoError(t, got.err)
			assert.Equal(t, toolcore.CodeToolValidationFailed, got.result.ErrorCode())
			assert.Equal(t, "validator did not return within "+tt.want+"; validators must be synchronous and must not block",
				got.result.ErrorMessage())
			assert.Zero(t, got.attempts)
		})
	}
}

func TestToolCallWorkflowFatal(t *testing.T) {
	reg := newRegistry(t, hostileTools(t)...)
	tests := []struct {
		name string
		give json.RawMessage
		want string
	}{
		{name: "returned", give: call("c1", "fatal", `{}`), want: "invariant broken: ledger mismatch"},
		{
			name: "wrapped and joined",
			give: call("c1", "fatal_wrapped", `{}`),
			want: toolcore.ErrorText(toolcore.WrapNonRecoverable(errors.New("disk"), "storage corrupted")),
		},
		{name: "panicked", give: call("c1", "tool_panic_fatal", `{}`), want: "fatal via panic"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := runWorkflow(t, reg, tt.give, runOptions{workflows: workflows.Workflows{SearchAttributes: true}})
			var appErr *temporal.ApplicationError
			require.ErrorAs(t, got.err, &appErr)
			assert.Equal(t, wire.ErrTypeNonRecoverable, appErr.Type())
			assert.True(t, appErr.NonRetryable())
			assert.Equal(t, tt.want, appErr.Message())
			assert.True(t, got.result.IsZero())
			assert.Equal(t, 1, got.attempts)
			assert.Equal(t, "fatal", got.outcome)
		})
	}
}

func TestToolCallWorkflowInvalidInput(t *testing.T) {
	reg := newRegistry(t, addTool())
	payload := func(encoding, data string) converter.RawValue {
		return converter.NewRawValue(&commonpb.Payload{
			Metadata: map[string][]byte{converter.MetadataEncoding: []byte(encoding)},
			Data:     []byte(data),
		})
	}
	parseMessage := func(data string) string {
		_, err := toolcore.ParseToolCall([]byte(data))
		var ce *toolcore.ContractError
		require.ErrorAs(t, err, &ce)
		return ce.Message
	}
	tests := []struct {
		name string
		give any
		want string
	}{
		{name: "not JSON", give: payload("json/plain", `{not json`), want: parseMessage(`{not json`)},
		{name: "missing arguments", give: json.RawMessage(`{"type":"toolCall","id":"c1","name":"add"}`), want: parseMessage(`{"type":"toolCall","id":"c1","name":"add"}`)},
		{name: "wrong type", give: json.RawMessage(`{"type":"message","id":"c1","name":"add","arguments":{}}`), want: parseMessage(`{"type":"message","id":"c1","name":"add","arguments":{}}`)},
		{name: "arguments not an object", give: call("c1", "add", `[1,2]`), want: parseMessage(string(call("c1", "add", `[1,2]`)))},
		{name: "duplicate keys", give: call("c1", "add", `{"left":1,"left":2}`), want: parseMessage(string(call("c1", "add", `{"left":1,"left":2}`)))},
		{name: "blank id", give: call(" ", "add", `{}`), want: parseMessage(string(call(" ", "add", `{}`)))},
		{name: "a JSON string holding a call", give: string(call("c1", "add", `{}`)), want: parseMessage(mustJSON(t, string(call("c1", "add", `{}`))))},
		{name: "no input", give: nil, want: `input encoding "binary/null" is not json/plain`},
		{name: "protobuf encoding", give: payload("json/protobuf", `{}`), want: `input encoding "json/protobuf" is not json/plain`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := runWorkflow(t, reg, tt.give, runOptions{workflows: workflows.Workflows{SearchAttributes: true}})
			var appErr *temporal.ApplicationError
			require.ErrorAs(t, got.err, &appErr)
			assert.Equal(t, wire.ErrTypeInvalidToolCall, appErr.Type())
			assert.True(t, appErr.NonRetryable())
			assert.Equal(t, tt.want, appErr.Message())
			assert.Zero(t, got.attempts)
			assert.Equal(t, "INVALID_TOOL_CALL", got.outcome)
			assert.Empty(t, got.toolName, "no tool name is known for a malformed call")
		})
	}
}

func TestToolCallWorkflowAcceptsPrintableWorkflowIDs(t *testing.T) {
	reg := newRegistry(t, addTool())
	for _, id := range []string{"toolcall-ts-%C3%A9-1", "my scope/toolcall-ts-1"} {
		t.Run(id, func(t *testing.T) {
			got := runWorkflow(t, reg, call("ts-é-1", "add", `{"left":1,"right":2}`), runOptions{workflowID: id})
			require.NoError(t, got.err)
			assert.Equal(t, 1, got.attempts)
		})
	}
}

func TestToolCallWorkflowRefusesUnprintableWorkflowIDs(t *testing.T) {
	reg := newRegistry(t, addTool())
	for _, id := range []string{"toolcall-ts-é-1", "toolcall-a\tb", "toolcall-\x7f"} {
		t.Run(id, func(t *testing.T) {
			got := runWorkflow(t, reg, call("ts-é-1", "add", `{"left":1,"right":2}`), runOptions{workflowID: id})
			var appErr *temporal.ApplicationError
			require.ErrorAs(t, got.err, &appErr)
			assert.Equal(t, wire.ErrTypeInvalidToolCall, appErr.Type())
			assert.Contains(t, appErr.Message(), "is not printable ASCII")
			assert.Contains(t, appErr.Message(), "toolcall-ts-%C3%A9-1")
			assert.Zero(t, got.attempts)
		})
	}
}

func TestToolCallWorkflowAcceptsEquivalentPayloads(t *testing.T) {
	reg := newRegistry(t, addTool())
	raw := call("call-add-1", "add", `{"right":22,"left":20}`)
	tests := []struct {
		name string
		give any
	}{
		{name: "json.RawMessage", give: raw},
		{name: "toolcore.ToolCall", give: mustCall(t, raw)},
		{name: "[]byte (binary/plain)", give: []byte(raw)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := runWorkflow(t, reg, tt.give, runOptions{})
			require.NoError(t, got.err)
			assert.Equal(t, `{"sum":42}`, got.result.Content())
			assert.Equal(t, "call-add-1", got.result.ToolCallID())
		})
	}
}

func TestToolCallWorkflowRetries(t *testing.T) {
	var exhausted, idempotent, unsafe, plain, panicky atomic.Int64
	count := func(n *atomic.Int64, err error) func(context.Context) (any, error) {
		return func(context.Context) (any, error) { n.Add(1); return nil, err }
	}
	readOnly := toolcore.Options{SideEffect: toolcore.ReadOnly, MaxAttempts: 3}
	reg := newRegistry(t,
		running("recovers", readOnly, func(ctx context.Context) (any, error) {
			if toolcore.Attempt(ctx) < 3 {
				return nil, toolcore.Transient(errors.New("rate limited"))
			}
			return map[string]int{"attempt": toolcore.Attempt(ctx)}, nil
		}),
		running("exhausted", readOnly, count(&exhausted, toolcore.Transient(errors.New("rate limited")))),
		running("idempotent", toolcore.Options{SideEffect: toolcore.Idempotent, MaxAttempts: 2}, count(&idempotent, toolcore.Transient(errors.New("busy")))),
		running("unsafe", toolcore.Options{}, count(&unsafe, toolcore.Transient(errors.New("try again later")))),
		running("plain", readOnly, count(&plain, errors.New("bad request"))),
		running("panicky", readOnly, func(context.Context) (any, error) { panicky.Add(1); panic("broken") }),
	)
	tests := []struct {
		name         string
		give         json.RawMessage
		wantContent  string
		wantAttempts int
	}{
		{name: "transient error retried until success", give: call("c1", "recovers", `{}`), wantContent: `{"attempt":3}`, wantAttempts: 3},
		{name: "transient error on the last attempt is the result", give: call("c1", "exhausted", `{}`), wantContent: `{"error":{"code":"TOOL_EXECUTION_FAILED","message":"rate limited"}}`, wantAttempts: 3},
		{name: "idempotent tools use their MaxAttempts", give: call("c1", "idempotent", `{}`), wantContent: `{"error":{"code":"TOOL_EXECUTION_FAILED","message":"busy"}}`, wantAttempts: 2},
		{name: "unsafe tools never retry transient errors", give: call("c1", "unsafe", `{}`), wantContent: `{"error":{"code":"TOOL_EXECUTION_FAILED","message":"try again later"}}`, wantAttempts: 1},
		{name: "ordinary errors are final at once", give: call("c1", "plain", `{}`), wantContent: `{"error":{"code":"TOOL_EXECUTION_FAILED","message":"bad request"}}`, wantAttempts: 1},
		{name: "panics are final at once", give: call("c1", "panicky", `{}`), wantContent: `{"error":{"code":"TOOL_EXECUTION_FAILED","message":"broken"}}`, wantAttempts: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := runWorkflow(t, reg, tt.give, runOptions{})
			require.NoError(t, got.err)
			assert.Equal(t, tt.wantContent, got.result.Content())
			assert.Equal(t, tt.wantAttempts, got.attempts)
		})
	}
	assert.Equal(t, int64(3), exhausted.Load())
	assert.Equal(t, int64(2), idempotent.Load())
	assert.Equal(t, int64(1), unsafe.Load())
	assert.Equal(t, int64(1), plain.Load())
	assert.Equal(t, int64(1), panicky.Load())
}

// TestToolCallWorkflowActivityFailures covers what only the server produces (timeouts, a lost
// worker, an interrupted attempt) by mocking ExecuteTool's failures per attempt.
func TestToolCallWorkflowActivityFailures(t *testing.T) {
	noop := func(context.Context) (any, error) { return nil, nil }
	reg := newRegistry(t,
		running("unsafe", toolcore.Options{}, noop),
		running("readonly", toolcore.Options{SideEffect: toolcore.ReadOnly, MaxAttempts: 3}, noop),
	)
	startToClose := temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_START_TO_CLOSE, nil)
	heartbeat := temporal.NewHeartbeatTimeoutError()
	interrupted := temporal.NewApplicationError("the worker stopped the attempt (worker is stopping)", wire.ErrTypeInterrupted)
	notRegistered := temporal.NewNonRetryableApplicationError(`tool "x" is not registered`, wire.ErrTypeToolNotRegistered, nil)
	unknown := workflows.OutcomeUnknownMessage
	tests := []struct {
		name         string
		tool         string
		failures     []error // returned by attempts 1..n; later attempts succeed with "ok"
		wantContent  string
		wantAttempts int
	}{
		{name: "unsafe start-to-close timeout", tool: "unsafe", failures: []error{startToClose},
			wantContent: errContent(unknown + " (timed out after 1m0s); unsafe calls are not retried"), wantAttempts: 1},
		{name: "unsafe worker lost", tool: "unsafe", failures: []error{heartbeat},
			wantContent: errContent(unknown + " (no heartbeat within 1m0s: worker lost or stalled); unsafe calls are not retried"), wantAttempts: 1},
		{name: "unsafe interrupted", tool: "unsafe", failures: []error{interrupted},
			wantContent: errContent(unknown + " (interrupted: the worker stopped the attempt (worker is stopping)); unsafe calls are not retried"), wantAttempts: 1},
		{name: "unsafe tool missing on the activity worker", tool: "unsafe", failures: []error{notRegistered},
			wantContent: errContent(`tool "x" is not registered`), wantAttempts: 1},
		{name: "read-only retried after timeouts", tool: "readonly", failures: []error{startToClose, heartbeat},
			wantContent: `"ok"`, wantAttempts: 3},
		{name: "read-only timeouts exhausted", tool: "readonly", failures: []error{heartbeat, interrupted, startToClose},
			wantContent: errContent("gave up after 3 attempts; last attempt: timed out after 1m0s"), wantAttempts: 3},
		{name: "read-only worker lost on every attempt", tool: "readonly", failures: []error{heartbeat, heartbeat, heartbeat},
			wantContent: errContent("gave up after 3 attempts; last attempt: no heartbeat within 1m0s: worker lost or stalled"), wantAttempts: 3},
		{name: "read-only tool missing is not retried", tool: "readonly", failures: []error{notRegistered},
			wantContent: errContent(`tool "x" is not registered`), wantAttempts: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls atomic.Int64
			got := runWorkflow(t, reg, call("c1", tt.tool, `{}`), runOptions{setup: func(env *testsuite.TestWorkflowEnvironment) {
				env.OnActivity(wire.ExecuteToolName, mock.Anything, mock.Anything).Return(
					func(context.Context, activities.ExecuteToolInput) (activities.ExecuteToolOutput, error) {
						n := int(calls.Add(1))
						if n <= len(tt.failures) {
							return activities.ExecuteToolOutput{}, tt.failures[n-1]
						}
						return activities.ExecuteToolOutput{Content: `"ok"`}, nil
					})
			}})
			require.NoError(t, got.err)
			assert.Equal(t, tt.wantContent, got.result.Content())
			assert.Equal(t, tt.wantAttempts, int(calls.Load()))
		})
	}
}

func errContent(msg string) string {
	b, err := json.Marshal(map[string]any{"error": map[string]string{"code": "TOOL_EXECUTION_FAILED", "message": msg}})
	if err != nil {
		panic(err)
	}
	return string(b)
}

func mustJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

func TestToolCallWorkflowRealTimeout(t *testing.T) {
	started := make(chan struct{}, 1)
	reg := newRegistry(t, running("hangs", toolcore.Options{Timeout: 50 * time.Millisecond}, func(ctx context.Context) (any, error) {
		started <- struct{}{}
		<-ctx.Done()
		return nil, ctx.Err()
	}))
	got := runWorkflow(t, reg, call("c1", "hangs", `{}`), runOptions{})
	require.NoError(t, got.err)
	assert.Equal(t, errContent(workflows.OutcomeUnknownMessage+" (timed out after 50ms); unsafe calls are not retried"), got.result.Content())
	assert.Len(t, started, 1, "the unsafe tool ran once")
}

func TestToolCallWorkflowSchedulesActivity(t *testing.T) {
	noop := func(context.Context) (any, error) { return nil, nil }
	reg := newRegistry(t,
		addTool(),
		running("io", toolcore.Options{SideEffect: toolcore.ReadOnly, MaxAttempts: 5, Timeout: 5 * time.Second, HeartbeatTimeout: 2 * time.Second, TaskQueue: "io-queue"}, noop),
	)
	tests := []struct {
		name        string
		give        json.RawMessage
		workflows   workflows.Workflows
		wantInput   activities.ExecuteToolInput
		wantQueue   string
		wantTimeout time.Duration
		wantBeat    time.Duration
	}{
		{
			name:        "unsafe defaults on the workflow's queue",
			give:        call("call-add-1", "add", `{"right":22,"left":20}`),
			wantInput:   activities.ExecuteToolInput{ToolCallID: "call-add-1", ToolName: "add", Accepted: json.RawMessage(`{"left":20,"right":22}`), IdempotencyKey: "toolcall-call-add-1", MaxAttempts: 1},
			wantQueue:   wire.DefaultTaskQueue,
			wantTimeout: time.Minute,
			wantBeat:    toolcore.DefaultHeartbeatTimeout,
		},
		{
			name:        "configured default queue",
			give:        call("call-add-1", "add", `{"left":1,"right":2}`),
			workflows:   workflows.Workflows{TaskQueue: "tools"},
			wantInput:   activities.ExecuteToolInput{ToolCallID: "call-add-1", ToolName: "add", Accepted: json.RawMessage(`{"left":1,"right":2}`), IdempotencyKey: "toolcall-call-add-1", MaxAttempts: 1},
			wantQueue:   "tools",
			wantTimeout: time.Minute,
			wantBeat:    toolcore.DefaultHeartbeatTimeout,
		},
		{
			name:        "read-only tool with its own queue and timeouts",
			give:        call("call-io-1", "io", `{}`),
			workflows:   workflows.Workflows{TaskQueue: "tools"},
			wantInput:   activities.ExecuteToolInput{ToolCallID: "call-io-1", ToolName: "io", Accepted: json.RawMessage(`{}`), IdempotencyKey: "toolcall-call-io-1", MaxAttempts: 5},
			wantQueue:   "io-queue",
			wantTimeout: 5 * time.Second,
			wantBeat:    2 * time.Second,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var gotInfo activity.Info
			var gotInput activities.ExecuteToolInput
			got := runWorkflow(t, reg, tt.give, runOptions{
				workflows:  tt.workflows,
				workflowID: "toolcall-" + tt.wantInput.ToolCallID,
				setup: func(env *testsuite.TestWorkflowEnvironment) {
					env.OnActivity(wire.ExecuteToolName, mock.Anything, mock.Anything).Return(
						func(ctx context.Context, in activities.ExecuteToolInput) (activities.ExecuteToolOutput, error) {
							gotInfo, gotInput = activity.GetInfo(ctx), in
							return activities.ExecuteToolOutput{Content: "null"}, nil
						}).Once()
				},
			})
			require.NoError(t, got.err)
			tool, ok := reg.Get(tt.wantInput.ToolName)
			require.True(t, ok)
			tt.wantInput.DefinitionHash = tool.DefinitionHash()      // recorded in history with the input
			tt.wantInput.Run = "toolcall-" + tt.wantInput.ToolCallID // a standalone call is its own run
			assert.Equal(t, tt.wantInput, gotInput)
			assert.Equal(t, tt.wantQueue, gotInfo.TaskQueue)
			assert.Equal(t, tt.wantTimeout, gotInfo.StartToCloseTimeout)
			assert.Equal(t, tt.wantBeat, gotInfo.HeartbeatTimeout)
		})
	}
}

func TestToolCallWorkflowCanceledDuringExecution(t *testing.T) {
	reg := newRegistry(t, addTool())
	got := runWorkflow(t, reg, call("c1", "add", `{"left":1,"right":2}`), runOptions{
		workflows: workflows.Workflows{SearchAttributes: true},
		setup: func(env *testsuite.TestWorkflowEnvironment) {
			env.OnActivity(wire.ExecuteToolName, mock.Anything, mock.Anything).
				After(time.Hour).Return(activities.ExecuteToolOutput{Content: `{"sum":3}`}, nil)
			env.RegisterDelayedCallback(env.CancelWorkflow, time.Minute)
		},
	})
	require.Error(t, got.err)
	assert.True(t, temporal.IsCanceledError(got.err), "want a canceled workflow, got %v", got.err)
	assert.True(t, got.result.IsZero())
	assert.Equal(t, 1, got.attempts)
	assert.Equal(t, "canceled", got.outcome)
}

// A toolgate client sets ToolName and ToolCallId at start: the closing upsert then carries the
// outcome alone, and the attributes a start left out (or set to other values) are set.
func TestToolCallWorkflowUpsertsOnlyWhatStartLeftOut(t *testing.T) {
	reg := newRegistry(t, addTool())
	nameKey := temporal.NewSearchAttributeKeyKeyword(wire.SearchAttributeToolName)
	idKey := temporal.NewSearchAttributeKeyKeyword(wire.SearchAttributeToolCallID)
	for _, tt := range []struct {
		name       string
		atStart    temporal.SearchAttributes
		wantName   string
		wantCallID string
	}{
		{name: "both set at start", atStart: temporal.NewSearchAttributes(nameKey.ValueSet("add"), idKey.ValueSet("c1"))},
		{name: "none at start", atStart: temporal.NewSearchAttributes(), wantName: "add", wantCallID: "c1"},
		{name: "other values at start", atStart: temporal.NewSearchAttributes(nameKey.ValueSet("sub"), idKey.ValueSet("c1")), wantName: "add"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := runWorkflow(t, reg, call("c1", "add", `{"left":1,"right":2}`), runOptions{
				workflows: workflows.Workflows{SearchAttributes: true},
				setup: func(env *testsuite.TestWorkflowEnvironment) {
					require.NoError(t, env.SetTypedSearchAttributesOnStart(tt.atStart))
				},
			})
			require.NoError(t, got.err)
			assert.Equal(t, 1, got.upserts)
			assert.Equal(t, "ok", got.outcome)
			assert.Equal(t, tt.wantName, got.toolName, "ToolName upserted")
			assert.Equal(t, tt.wantCallID, got.callID, "ToolCallId upserted")
		})
	}
}
