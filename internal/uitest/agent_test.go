package uitest

import (
	"bytes"
	"context"
	"encoding/json"
	"net/url"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	sdkclient "go.temporal.io/sdk/client"

	"github.com/toolgate/toolgate/internal/testbin"
	"github.com/toolgate/toolgate/wire"
)

// agentRun is what `examples/agent -json` prints.
type agentRun struct {
	WorkflowID   string `json:"workflowId"`
	RunID        string `json:"runId"`
	Answer       string `json:"answer"`
	Turns        int    `json:"turns"`
	Conversation []struct {
		Role       string `json:"role"`
		Content    string `json:"content"`
		ToolCallID string `json:"toolCallId"`
		IsError    bool   `json:"isError"`
	} `json:"conversation"`
}

// TestExampleAgentAgainstDev runs the example agent (examples/agent, built as a binary) against a
// real `toolgate dev`, as the README says to: its scripted conversation calls add and echo in one
// round, through workflows.ExecuteRound, on the dev server's own toolbox worker. The answer quotes
// the add tool's result, and each call is a ToolCallWorkflow that is a child of the agent workflow.
// In Chromium, the agent's Relationships page in the Web UI lists both calls as its children,
// linked to their runs (screenshot ui-agent-relationships.png).
func TestExampleAgentAgainstDev(t *testing.T) {
	if testing.Short() {
		t.Skip("example agent: builds toolgate and the agent, starts a Temporal server")
	}
	bin, err := testbin.Toolgate()
	require.NoError(t, err)
	agent, err := testbin.Build("./examples/agent", "agent")
	require.NoError(t, err)
	dev := startDev(t, bin)

	const agentID = "uitest-agent"
	run := runAgent(t, agent, childEnv("TEMPORAL_ADDRESS="+dev.frontend, "TEMPORAL_NAMESPACE="+dev.namespace), "-id", agentID)
	assert.Equal(t, agentID, run.WorkflowID)
	assert.Equal(t, `20 + 22: the add tool says {"sum":42}.`, run.Answer)
	assert.Equal(t, 2, run.Turns)
	var toolMessages []string
	for _, m := range run.Conversation {
		if m.Role == "tool" {
			toolMessages = append(toolMessages, m.ToolCallID)
			assert.False(t, m.IsError, "%s: %s", m.ToolCallID, m.Content)
		}
	}
	assert.Equal(t, []string{"call-add", "call-echo"}, toolMessages, "one outcome per call, in the order of the calls")

	c, err := sdkclient.Dial(sdkclient.Options{HostPort: dev.frontend, Namespace: dev.namespace})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	want := []string{agentID + "/toolcall-call-add", agentID + "/toolcall-call-echo"}
	assert.Equal(t, want, childIDs(t, c, agentID, run.RunID), "the agent's history starts each call as a child")
	childRuns := map[string]string{} // workflow ID -> run ID
	for _, id := range want {
		ctx, cancel := context.WithTimeout(t.Context(), runTimeout)
		d, err := c.DescribeWorkflowExecution(ctx, id, "")
		cancel()
		require.NoError(t, err, id)
		info := d.GetWorkflowExecutionInfo()
		assert.Equal(t, wire.ToolCallWorkflowName, info.GetType().GetName(), id)
		assert.Equal(t, enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED, info.GetStatus(), id)
		assert.Equal(t, agentID, info.GetParentExecution().GetWorkflowId(), "%s: parent", id)
		assert.Equal(t, run.RunID, info.GetParentExecution().GetRunId(), "%s: parent run", id)
		childRuns[id] = info.GetExecution().GetRunId()
	}

	t.Run("web UI relationships", func(t *testing.T) {
		tab := startBrowser(t)
		page := dev.ui + "/namespaces/" + url.PathEscape(dev.namespace) + "/workflows/" + url.PathEscape(agentID) + "/" + url.PathEscape(run.RunID) + "/relationships"
		shown, err := waitForPage[relationshipsPage](t, tab, page, relationshipsPageFunc, filepath.Join(artifactDir(t, moduleRoot(t)), "ui-agent-relationships.png"), agentID, want)
		require.NoError(t, err)
		assert.Equal(t, "completed", strings.ToLower(shown.Status))
		assert.Equal(t, "2", shown.ChildCount)
		require.Len(t, shown.Children, len(want))
		for i, child := range shown.Children {
			assert.Equal(t, want[i], child.ID)
			// The link leads to the child's own run.
			assert.Contains(t, child.Href, "/workflows/"+url.PathEscape(want[i])+"/"+childRuns[want[i]], child.ID)
		}
	})
}

// relationshipsPage is what a workflow's Relationships page shows, read by relationshipsPageFunc.
type relationshipsPage struct {
	Status     string `json:"status"`
	ChildCount string `json:"childCount"`
	Children   []struct {
		ID   string `json:"id"`
		Href string `json:"href"`
	} `json:"children"`
}

// relationshipsPageFunc returns the page once the heading names the workflow and a link to each
// expected child is shown, with the "Child Count" the page states; null until then. The
// selectors are those of ui-server v2.55.0's workflow header and relationships tab.
const relationshipsPageFunc = `(wid, children) => {
	const text = (sel) => { const el = document.querySelector(sel); return el ? el.innerText.trim() : ""; };
	if (text('[data-testid="workflow-id-heading"]') !== wid) {
		return null;
	}
	const found = [];
	for (const id of children) {
		const a = Array.from(document.querySelectorAll("a[href]")).find((a) => a.innerText.trim() === id);
		if (!a) {
			return null;
		}
		found.push({ id: id, href: a.getAttribute("href") });
	}
	const count = /Child Count\s+(\d+)/.exec(document.body.innerText);
	if (!count) {
		return null;
	}
	return { status: text('[data-testid="execution-status"]'), childCount: count[1], children: found };
}`

// runAgent runs the agent binary with -json and args to completion and returns what it printed.
func runAgent(t *testing.T, agent string, env []string, args ...string) agentRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), runTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, agent, append([]string{"-json"}, args...)...)
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "agent %s: %s", strings.Join(args, " "), tail(stderr.String(), 4000))
	var run agentRun
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &run), "agent printed %q", stdout.String())
	return run
}

// childIDs are the workflow IDs of the children the run started, sorted.
func childIDs(t *testing.T, c sdkclient.Client, workflowID, runID string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), runTimeout)
	defer cancel()
	var ids []string
	it := c.GetWorkflowHistory(ctx, workflowID, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		e, err := it.Next()
		require.NoError(t, err)
		if a := e.GetChildWorkflowExecutionStartedEventAttributes(); a != nil {
			ids = append(ids, a.GetWorkflowExecution().GetWorkflowId())
		}
	}
	sort.Strings(ids)
	return ids
}
