package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	sdkclient "go.temporal.io/sdk/client"
	"go.temporal.io/sdk/workflow"

	tgclient "github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
	"github.com/toolgate/toolgate/worker"
	"github.com/toolgate/toolgate/workflows"
)

// bookArgs are the arguments of the e2e tests' book tool.
type bookArgs struct {
	Fail bool `json:"fail"`
}

// bookRegistry has book, which fails (an ordinary error: a TOOL_EXECUTION_FAILED result) when
// asked to, and lookup, which always fails.
// bookTool books a seat and fails (an ordinary error: a TOOL_EXECUTION_FAILED result) when
// asked to.
func bookTool() toolcore.Tool {
	return toolcore.MustDefine(toolcore.Definition[bookArgs]{
		Name:        "book",
		Description: "Book a seat; fails when asked to.",
		Execute: func(_ context.Context, a bookArgs) (any, error) {
			if a.Fail {
				return nil, errors.New("no seat left")
			}
			return "booked", nil
		},
	})
}

func bookRegistry(t *testing.T) *toolcore.Registry {
	t.Helper()
	reg, err := toolcore.NewRegistry(
		bookTool(),
		toolcore.MustDefine(toolcore.Definition[bookArgs]{
			Name:        "lookup",
			Description: "Always fails.",
			Execute:     func(context.Context, bookArgs) (any, error) { return nil, errors.New("lookup down") },
		}))
	require.NoError(t, err)
	return reg
}

// bookingAgent runs its calls one after another as child calls (CallOptions without
// SearchAttributes: the children start without ToolName and ToolCallId, the form that recorded
// ToolOutcome "ok" before the outcome rule held for it).
func bookingAgent(queue string) func(ctx workflow.Context, calls []json.RawMessage) error {
	return func(ctx workflow.Context, calls []json.RawMessage) error {
		ctx = workflows.WithCallOptions(ctx, workflows.CallOptions{TaskQueue: queue})
		for _, raw := range calls {
			call, err := toolcore.ParseToolCall(raw)
			if err != nil {
				return err
			}
			if _, err := workflows.ExecuteToolCall(ctx, call); err != nil {
				return err
			}
		}
		return nil
	}
}

// bookCall is the wire JSON of a call of tool.
func bookCall(id, tool string, fail bool) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"type":"toolCall","id":%q,"name":%q,"arguments":{"fail":%t}}`, id, tool, fail))
}

// waitClosed waits until visibility lists n closed calls query selects (it lags history).
func waitClosed(t *testing.T, c sdkclient.Client, query string, n int64) {
	t.Helper()
	require.Eventually(t, func() bool {
		resp, err := c.CountWorkflow(t.Context(), &workflowservice.CountWorkflowExecutionsRequest{
			Namespace: "default", Query: query + " AND ExecutionStatus != 'Running'"})
		return err == nil && resp.GetCount() == n
	}, lineTimeout, 50*time.Millisecond, "visibility lists %d closed calls of %s", n, query)
}

// TestListFailedCallsOfATool: toolgate list --tool book --outcome error --since 1h returns exactly
// the failed calls of book, standalone and child alike; --outcome ok both recorded forms of an ok
// call (unset, and "ok" from a client without the outcome rule); --agent-run a run's child calls;
// and the counts per outcome add up to the calls made (issue 35 item 2).
func TestListFailedCallsOfATool(t *testing.T) {
	dev := startDev(t, "--in-memory", "--no-ui")
	c, err := sdkclient.Dial(sdkclient.Options{HostPort: dev.addr["frontend"], Namespace: "default"})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	const queue = "e2e-list"
	w, err := worker.New(c, "default", bookRegistry(t), worker.Options{TaskQueue: queue, StopTimeout: 5 * time.Second})
	require.NoError(t, err)
	w.RegisterWorkflowWithOptions(bookingAgent(queue), workflow.RegisterOptions{Name: "bookingAgent"})
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)

	ctx := t.Context()
	tg := tgclient.New(c, tgclient.Options{TaskQueue: queue, Namespace: "default"})
	for _, raw := range []json.RawMessage{bookCall("b1", "book", false), bookCall("b2", "book", true),
		bookCall("b3", "book", true), bookCall("l1", "lookup", false)} {
		call, err := toolcore.ParseToolCall(raw)
		require.NoError(t, err)
		_, err = tg.Execute(ctx, call)
		require.NoError(t, err)
	}
	run, err := c.ExecuteWorkflow(ctx, sdkclient.StartWorkflowOptions{ID: "agent-list-1", TaskQueue: queue}, "bookingAgent",
		[]json.RawMessage{bookCall("c1", "book", false), bookCall("c2", "book", true)})
	require.NoError(t, err)
	require.NoError(t, run.Get(ctx, nil))
	// A client without the outcome rule (another SDK, the Temporal CLI): its ok call records "ok".
	foreign, err := c.ExecuteWorkflow(ctx, sdkclient.StartWorkflowOptions{ID: "toolcall-f1", TaskQueue: queue,
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE}, wire.ToolCallWorkflowName, bookCall("f1", "book", false))
	require.NoError(t, err)
	require.NoError(t, foreign.Get(ctx, nil))
	waitClosed(t, c, "ToolName = 'book'", 6)
	waitClosed(t, c, "ToolName = 'lookup'", 1)

	list := func(t *testing.T, args ...string) listJSON {
		t.Helper()
		got := toolgate(t, dev.env(), "", append([]string{"list", "--json"}, args...)...)
		require.Equal(t, ExitOK, got.code, got.stderr)
		var out listJSON
		require.NoError(t, json.Unmarshal([]byte(got.stdout), &out), got.stdout)
		return out
	}
	ids := func(out listJSON) []string {
		var ids []string
		for _, c := range out.Calls {
			ids = append(ids, c.WorkflowID)
		}
		sort.Strings(ids)
		return ids
	}

	failed := list(t, "--tool", "book", "--outcome", "error", "--since", "1h")
	assert.Equal(t, []string{"toolcall-b2", "toolcall-b3", "toolcall-c2"}, ids(failed), "standalone and child alike")
	for _, call := range failed.Calls {
		assert.Equal(t, "TOOL_EXECUTION_FAILED", call.Outcome)
		assert.Equal(t, "book", call.ToolName)
		if call.WorkflowID == "toolcall-c2" {
			assert.Equal(t, "agent-list-1", call.AgentRun)
		}
	}
	assert.Equal(t, countsJSON{Total: 3, ByOutcome: map[string]int64{"TOOL_EXECUTION_FAILED": 3}}, failed.Counts)
	assert.False(t, failed.More)

	ok := list(t, "--tool", "book", "--outcome", "ok")
	assert.Equal(t, []string{"toolcall-b1", "toolcall-c1", "toolcall-f1"}, ids(ok), "both recorded forms of ok")
	for _, call := range ok.Calls {
		assert.Equal(t, wire.OutcomeOK, call.Outcome)
	}

	all := list(t, "--tool", "book", "--since", "1h")
	assert.Len(t, all.Calls, 6)
	assert.Equal(t, countsJSON{Total: 6, ByOutcome: map[string]int64{"ok": 3, "TOOL_EXECUTION_FAILED": 3}}, all.Counts,
		"the counts add up to the calls made")

	children := list(t, "--agent-run", "agent-list-1")
	assert.Equal(t, []string{"toolcall-c1", "toolcall-c2"}, ids(children))
	assert.Equal(t, int64(2), children.Counts.Total)

	everything := list(t, "--task-queue", queue, "--limit", "2")
	assert.Len(t, everything.Calls, 2)
	assert.True(t, everything.More)
	var sum int64
	for _, n := range everything.Counts.ByOutcome {
		sum += n
	}
	assert.Equal(t, int64(7), everything.Counts.Total, "6 of book, 1 of lookup")
	assert.Equal(t, everything.Counts.Total, sum, "per-outcome counts add up: %v", everything.Counts.ByOutcome)

	text := toolgate(t, dev.env(), "", "list", "--tool", "book", "--outcome", "error", "--since", "1h")
	require.Equal(t, ExitOK, text.code, text.stderr)
	lines := strings.Split(strings.TrimSuffix(text.stdout, "\n"), "\n")
	require.Len(t, lines, 4, text.stdout)
	assert.Regexp(t, `^toolcall-(b2|b3|c2)\tbook\t(b2|b3|c2)\tcompleted\tTOOL_EXECUTION_FAILED\t\S+Z\t(-|agent-list-1)$`, lines[0])
	assert.Equal(t, "3 calls: 3 TOOL_EXECUTION_FAILED", lines[3])
	count := toolgate(t, dev.env(), "", "list", "--tool", "book", "--count")
	require.Equal(t, ExitOK, count.code, count.stderr)
	assert.Equal(t, "6 calls: 3 TOOL_EXECUTION_FAILED, 3 ok\n", count.stdout)

	bad := toolgate(t, dev.env(), "", "list", "--outcome", "ok' OR 1=1")
	assert.Equal(t, ExitUsage, bad.code, bad.stderr)
}
