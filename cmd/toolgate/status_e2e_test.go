package main

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdkclient "go.temporal.io/sdk/client"
	"go.temporal.io/sdk/workflow"

	tgclient "github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/worker"
	"github.com/toolgate/toolgate/workflows"
)

// statusRegistry has flaky (its first attempt fails transiently), fatal (a NonRecoverableToolError)
// and later (asks to be retried in an hour), beside book and lookup.
func statusRegistry(t *testing.T) *toolcore.Registry {
	t.Helper()
	reg, err := toolcore.NewRegistry(
		toolcore.MustDefine(toolcore.Definition[bookArgs]{
			Name:        "flaky",
			Description: "Fails its first attempt transiently.",
			Execute: func(ctx context.Context, _ bookArgs) (any, error) {
				if toolcore.Attempt(ctx) == 1 {
					return nil, toolcore.Transient(errors.New("connection reset by peer"))
				}
				return "done", nil
			},
			Options: toolcore.Options{SideEffect: toolcore.Idempotent, MaxAttempts: 3},
		}),
		toolcore.MustDefine(toolcore.Definition[bookArgs]{
			Name:        "fatal",
			Description: "Fails the run.",
			Execute: func(context.Context, bookArgs) (any, error) {
				return nil, toolcore.NewNonRecoverableToolError("ledger corrupted")
			},
		}),
		toolcore.MustDefine(toolcore.Definition[bookArgs]{
			Name:        "later",
			Description: "Asks to be retried in an hour.",
			Execute: func(context.Context, bookArgs) (any, error) {
				return nil, toolcore.RetryAfter(errors.New("429 Too Many Requests"), time.Hour)
			},
			Options: toolcore.Options{SideEffect: toolcore.Idempotent, MaxAttempts: 3},
		}),
		toolcore.MustDefine(toolcore.Definition[bookArgs]{
			Name:        "quote",
			Description: "Quotes a price in the agent's own workflow task (Local).",
			Execute:     func(context.Context, bookArgs) (any, error) { return "42 EUR", nil },
			Options:     toolcore.Options{SideEffect: toolcore.ReadOnly, Local: true},
		}),
		bookTool())
	require.NoError(t, err)
	return reg
}

// statusOf runs toolgate status --json of workflowID.
func statusOf(t *testing.T, dev *devServer, workflowID string) statusJSON {
	t.Helper()
	got := toolgate(t, dev.env(), "", "status", "--json", workflowID)
	require.Equal(t, ExitOK, got.code, got.stderr)
	var st statusJSON
	require.NoError(t, json.Unmarshal([]byte(got.stdout), &st), got.stdout)
	return st
}

// statusText runs toolgate status of workflowID and returns its "key value" lines by key (the
// values of a repeated key joined by newlines).
func statusText(t *testing.T, dev *devServer, workflowID string) map[string]string {
	t.Helper()
	got := toolgate(t, dev.env(), "", "status", workflowID)
	require.Equal(t, ExitOK, got.code, got.stderr)
	lines := map[string]string{}
	for _, l := range strings.Split(strings.TrimSuffix(got.stdout, "\n"), "\n") {
		key := strings.TrimSpace(l[:min(len(l), 9)])
		value := ""
		if len(l) > 10 {
			value = l[10:]
		}
		if lines[key] != "" {
			value = lines[key] + "\n" + value
		}
		lines[key] = value
	}
	return lines
}

// TestStatusShowsQueueAttemptsFailureAndWaits: toolgate status shows the call's task queue, how
// many attempts started (2 for a call whose first attempt failed, after it completed), the last
// failed attempt's message, a fatal call's message, and what a running call waits for: the retry
// timer, or a worker on a named queue that no worker polls (issue 35 item 3).
func TestStatusShowsQueueAttemptsFailureAndWaits(t *testing.T) {
	dev := startDev(t, "--in-memory", "--no-ui")
	c, err := sdkclient.Dial(sdkclient.Options{HostPort: dev.addr["frontend"], Namespace: "default"})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	const queue = "e2e-status"
	w, err := worker.New(c, "default", statusRegistry(t), worker.Options{TaskQueue: queue, StopTimeout: 5 * time.Second})
	require.NoError(t, err)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)

	got := toolgate(t, dev.env(), "", "call", "--task-queue", queue, "--id", "st-flaky", "flaky", `{"fail":false}`)
	require.Equal(t, ExitOK, got.code, got.stdout+got.stderr)
	st := statusOf(t, dev, "toolcall-st-flaky")
	assert.Equal(t, "completed", st.State)
	assert.Equal(t, queue, st.TaskQueue)
	assert.Equal(t, 2, st.Attempts, "the attempt that failed and the one that completed")
	assert.Equal(t, "connection reset by peer", st.LastFailure)
	lines := statusText(t, dev, "toolcall-st-flaky")
	assert.Equal(t, "2", lines["attempts"])
	assert.Equal(t, queue, lines["queue"])
	assert.Equal(t, "last attempt failed: connection reset by peer", lines["failure"])

	got = toolgate(t, dev.env(), "", "call", "--task-queue", queue, "--id", "st-fatal", "fatal", `{"fail":false}`)
	require.Equal(t, ExitFatal, got.code, got.stderr)
	st = statusOf(t, dev, "toolcall-st-fatal")
	assert.Equal(t, "failed", st.State)
	assert.Contains(t, st.Error, "ledger corrupted")
	assert.Equal(t, 1, st.Attempts)
	assert.Contains(t, statusText(t, dev, "toolcall-st-fatal")["error"], "ledger corrupted", "a fatal call shows its message")

	got = toolgate(t, dev.env(), "", "call", "--task-queue", queue, "--id", "st-later", "--detach", "later", `{"fail":false}`)
	require.Equal(t, ExitOK, got.code, got.stderr)
	require.Eventually(t, func() bool {
		st = statusOf(t, dev, "toolcall-st-later")
		return st.Waiting != nil && st.Waiting.Kind == tgclient.WaitRetry
	}, lineTimeout, 50*time.Millisecond, "waits for the retry timer")
	assert.Equal(t, 1, st.Attempts)
	assert.Equal(t, "429 Too Many Requests", st.LastFailure)
	assert.True(t, st.Waiting.Until.After(time.Now().Add(time.Minute)), "the timer is Retry-After's delay away (capped): %s", st.Waiting.Until)
	assert.Regexp(t, `^the retry timer until \S+Z$`, statusText(t, dev, "toolcall-st-later")["waits for"])
	require.Equal(t, ExitOK, toolgate(t, dev.env(), "", "cancel", "toolcall-st-later").code)

	got = toolgate(t, dev.env(), "", "call", "--task-queue", "e2e-status-nobody", "--id", "st-stuck", "--detach", "book", `{"fail":false}`)
	require.Equal(t, ExitOK, got.code, got.stderr)
	st = statusOf(t, dev, "toolcall-st-stuck")
	require.NotNil(t, st.Waiting, "a call on a queue no worker polls waits for one")
	assert.Equal(t, tgclient.WaitWorker, st.Waiting.Kind)
	assert.Equal(t, "e2e-status-nobody", st.Waiting.TaskQueue)
	assert.Equal(t, 0, st.Attempts)
	assert.Regexp(t, `^a worker on task queue e2e-status-nobody \(since \S+Z\)$`, statusText(t, dev, "toolcall-st-stuck")["waits for"])
	require.Equal(t, ExitOK, toolgate(t, dev.env(), "", "cancel", "toolcall-st-stuck").code)
}

// TestStatusOfAnAgentRun: toolgate status of an agent run (a workflow that is not a call) shows its
// type and queue and each call it made with its outcome, children and inline calls alike, and
// the error of a run that failed (issue 35 item 3).
func TestStatusOfAnAgentRun(t *testing.T) {
	dev := startDev(t, "--in-memory", "--no-ui")
	c, err := sdkclient.Dial(sdkclient.Options{HostPort: dev.addr["frontend"], Namespace: "default"})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	const queue = "e2e-status-agent"
	reg := statusRegistry(t)
	w, err := worker.New(c, "default", reg, worker.Options{TaskQueue: queue, StopTimeout: 5 * time.Second})
	require.NoError(t, err)
	inline := &workflows.Inline{Registry: reg, TaskQueue: queue}
	w.RegisterWorkflowWithOptions(func(ctx workflow.Context, calls []json.RawMessage) error {
		ctx = workflows.WithCallOptions(ctx, workflows.CallOptions{TaskQueue: queue})
		for _, raw := range calls {
			call, err := toolcore.ParseToolCall(raw)
			if err != nil {
				return err
			}
			run := workflows.ExecuteToolCall
			if strings.HasPrefix(call.ID(), "i") {
				run = inline.ExecuteToolCall
			}
			if _, err := run(ctx, call); err != nil {
				return err
			}
		}
		return nil
	}, workflow.RegisterOptions{Name: "bookingAgent"})
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	ctx := t.Context()

	run, err := c.ExecuteWorkflow(ctx, sdkclient.StartWorkflowOptions{ID: "agent-status-1", TaskQueue: queue}, "bookingAgent",
		[]json.RawMessage{bookCall("s1", "book", false), bookCall("i2", "book", true), bookCall("i[q](x)", "quote", false), bookCall("s3", "fatal", false)})
	require.NoError(t, err)
	require.Error(t, run.Get(ctx, nil), "the fatal call fails the run")

	st := statusOf(t, dev, "agent-status-1")
	assert.Equal(t, "bookingAgent", st.WorkflowType)
	assert.Equal(t, queue, st.TaskQueue)
	assert.Equal(t, "failed", st.State)
	assert.Contains(t, st.Error, "ledger corrupted")
	assert.Equal(t, []tgclient.RunCall{
		{ToolCallID: "s1", ToolName: "book", Kind: tgclient.RunCallChild, WorkflowID: "toolcall-s1", Outcome: "ok"},
		{ToolCallID: "i2", ToolName: "book", Kind: tgclient.RunCallInline, Outcome: "error"},
		{ToolCallID: "i[q](x)", ToolName: "quote", Kind: tgclient.RunCallInline, Outcome: "ok"},
		{ToolCallID: "s3", ToolName: "fatal", Kind: tgclient.RunCallChild, WorkflowID: "toolcall-s3", Outcome: "fatal", Message: "ledger corrupted"},
	}, st.Calls)

	lines := statusText(t, dev, "agent-status-1")
	assert.Equal(t, "bookingAgent", lines["type"])
	assert.Equal(t, "4: 2 ok, 1 error, 1 fatal", lines["calls"])
	assert.Equal(t, "s1 book child ok toolcall-s1\ni2 book inline error\ni[q](x) quote inline ok\ns3 fatal child fatal toolcall-s3: ledger corrupted", lines["call"])
	assert.NotContains(t, lines, "attempt", "no tool attempt line for a run")
	assert.Contains(t, lines["error"], "ledger corrupted")
}
