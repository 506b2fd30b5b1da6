package faults_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	tgclient "github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/internal/faults"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// cliRun is one finished toolgate command.
type cliRun struct {
	stdout, stderr string
	code           int
}

func runCLI(t *testing.T, args ...string) cliRun {
	t.Helper()
	toolgate, _ := built(t)
	ctx, cancel := context.WithTimeout(context.Background(), outcomeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, toolgate, args...)
	cmd.Env = childEnv()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		require.NoError(t, err, "toolgate %v", args)
	}
	return cliRun{stdout: stdout.String(), stderr: stderr.String(), code: cmd.ProcessState.ExitCode()}
}

// jsonLines decodes every line of s as a JSON object; a line that is not one fails the test.
func jsonLines(t *testing.T, what, s string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if assert.NoError(t, json.Unmarshal([]byte(line), &m), "%s: a log line is not one JSON object: %q", what, line) {
			out = append(out, m)
		}
	}
	return out
}

// visibilityTimeout bounds the wait for visibility to show a closed call.
const visibilityTimeout = 30 * time.Second

// toolCallIDs lists the executions matching query: workflow ID -> ToolCallId search attribute.
func toolCallIDs(t *testing.T, sdk client.Client, query string) map[string]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	resp, err := sdk.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: "default", PageSize: 1000, Query: query})
	require.NoError(t, err, query)
	out := map[string]string{}
	for _, e := range resp.GetExecutions() {
		var id string
		if p := e.GetSearchAttributes().GetIndexedFields()["ToolCallId"]; p != nil {
			require.NoError(t, converter.GetDefaultDataConverter().FromPayload(p, &id))
		}
		out[e.GetExecution().GetWorkflowId()] = id
	}
	return out
}

// queryString quotes s for a Temporal visibility query.
func queryString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

// TestHostileIDs sends calls whose IDs and names try to break workflow IDs, search attributes
// and log lines through the CLI (`toolgate call --log-format json`) and the Go client. Each
// accepted ID is kept byte for byte (in the workflow ID: escaped, wire.WorkflowID), the ToolCallId search attribute (and a
// visibility query on it finds exactly that call), the result message and every log line, each
// of which stays one JSON object. IDs with control or invisible characters are refused before
// anything starts. A workflow ID that two scopes could both produce is never answered with the
// other call's result.
func TestHostileIDs(t *testing.T) {
	f := newFixture(t, sharedDev(t))
	cl, sdk := f.client(t)
	w := f.startWorker(t, false)
	began := time.Now()
	fig := figures{Scenario: "hostile-ids", Detail: map[string]int{}}

	ids := []string{
		"../../etc/passwd",
		"a/toolcall-b",
		"toolcall-toolcall-",
		"' OR '1'='1",
		`"; DROP TABLE executions; --`,
		`ToolCallId = 'x' OR ToolName = 'y'`,
		"${jndi:ldap://127.0.0.1/x}",
		"%s%n%x%v",
		"<script>alert(1)</script>",
		`{"level":"error","msg":"forged","toolCallId":"other"}`,
		`back\slash "quote" 'single'`,
		"*",
		"--help",
		" leading and trailing ",
		strings.Repeat("x", toolcore.MaxIDBytes),
	}
	// Valid call IDs outside printable ASCII: they run under their escaped workflow IDs.
	nonASCII := []string{"🔥 emoji and שלום and 漢字", strings.Repeat("é", toolcore.MaxIDBytes/2)}
	// --log-level info: a one-shot command logs warnings and errors only by default.
	common := []string{"--address", f.dev.frontend, "--task-queue", f.queue, "--log-format", "json", "--log-level", "info"}
	for _, id := range ids {
		t.Run(id, func(t *testing.T) {
			fig.Calls++
			got := runCLI(t, append([]string{"call", "--id=" + id, faults.ToolReadOnly, "{}"}, common...)...)
			require.Equal(t, 0, got.code, got.stderr)
			var res toolcore.Result
			require.NoError(t, json.Unmarshal([]byte(got.stdout), &res), got.stdout)
			if !assert.Equal(t, id, res.ToolCallID()) || !assert.Equal(t, toolcore.ResultIDPrefix+id, res.ID()) {
				fig.Lost++
			}
			out, ok := effectOutput(res)
			assert.True(t, ok, res.Content())
			assert.Equal(t, wire.WorkflowID("", id), out.Key, "idempotency key")

			named := 0
			for _, line := range jsonLines(t, "toolgate call", got.stderr) {
				if v, ok := line["toolCallId"]; ok {
					named++
					assert.Equal(t, id, v, "toolCallId field of %v", line)
					assert.Equal(t, wire.WorkflowID("", id), line["workflowId"], "workflowId field of %v", line)
				}
			}
			assert.Positive(t, named, "log lines name the call")

			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			desc, err := sdk.DescribeWorkflowExecution(ctx, wire.WorkflowID("", id), "")
			require.NoError(t, err)
			assert.Equal(t, wire.WorkflowID("", id), desc.GetWorkflowExecutionInfo().GetExecution().GetWorkflowId())
			var attr string
			fields := desc.GetWorkflowExecutionInfo().GetSearchAttributes().GetIndexedFields()
			require.NoError(t, converter.GetDefaultDataConverter().FromPayload(fields["ToolCallId"], &attr))
			assert.Equal(t, id, attr, "ToolCallId search attribute")

			if !strings.ContainsAny(id, `'"\`) {
				// Equality on a Keyword value with quotes or backslashes finds nothing on the dev
				// server's SQLite visibility under any escaping tried (the stored value is
				// intact: see the listing below), so only the others are queried by value.
				query := "ToolCallId = " + queryString(id) + " AND TaskQueue = " + queryString(f.queue)
				var found map[string][]enumspb.WorkflowExecutionStatus
				require.Eventually(t, func() bool {
					found = listExecutions(t, sdk, query)
					return len(found) > 0
				}, visibilityTimeout, 100*time.Millisecond, "visibility finds %s", query)
				assert.Len(t, found, 1, "exactly this call")
				assert.Contains(t, found, wire.WorkflowID("", id))
				fig.Detail["queriedByValue"]++
			}
			fig.Detail["accepted"]++
		})
	}

	t.Run("hostile tool name", func(t *testing.T) {
		fig.Calls++
		name := `<script>"x"</script>`
		got := runCLI(t, append([]string{"call", "--id=hostile-name", name, "{}"}, common...)...)
		assert.Equal(t, 1, got.code, "an error result exits 1: %s", got.stderr)
		var res toolcore.Result
		require.NoError(t, json.Unmarshal([]byte(got.stdout), &res), got.stdout)
		assert.Equal(t, toolcore.CodeToolNotFound, res.ErrorCode())
		assert.Equal(t, f.unknownToolMessage(t, name), res.ErrorMessage(), "names the queue and the worker's tools")
		jsonLines(t, "toolgate call", got.stderr)
	})

	t.Run("refused before anything starts", func(t *testing.T) {
		for _, id := range []string{
			"line\nbreak", "carriage\rreturn", "tab\there", "bidi\u202eoverride", "zero\u200bwidth",
			"bom\ufeff", "line\u2028separator", "   ", strings.Repeat("x", toolcore.MaxIDBytes+1),
		} {
			fig.Calls++
			got := runCLI(t, append([]string{"call", "--id=" + id, faults.ToolReadOnly, "{}"}, common...)...)
			assert.Equal(t, 2, got.code, "%q: bad input exits 2: %s", id, got.stderr)
			assert.Empty(t, got.stdout)
			jsonLines(t, "toolgate call", got.stderr)
			_, err := toolcore.NewToolCall(id, faults.ToolReadOnly, []byte("{}"))
			assert.Error(t, err, "%q", id)
			fig.Detail["refused"]++
		}
		_, err := toolcore.NewToolCall("nul\x00byte", faults.ToolReadOnly, []byte("{}"))
		assert.Error(t, err, "NUL")
	})

	t.Run("non-ASCII IDs run under escaped workflow IDs", func(t *testing.T) {
		for _, id := range nonASCII {
			fig.Calls++
			got := runCLI(t, append([]string{"call", "--id=" + id, faults.ToolReadOnly, "{}"}, common...)...)
			require.Equal(t, 0, got.code, "%q: %s", id, got.stderr)
			var res toolcore.Result
			require.NoError(t, json.Unmarshal([]byte(got.stdout), &res), got.stdout)
			assert.Equal(t, id, res.ToolCallID())
			out, ok := effectOutput(res)
			assert.True(t, ok, res.Content())
			assert.Equal(t, wire.WorkflowID("", id), out.Key, "idempotency key: the escaped workflow ID")
			fig.Detail["nonASCIIEscaped"]++
		}
	})

	t.Run("scope collision is a conflict, never the other call's result", func(t *testing.T) {
		// No scope, ID "x/toolcall-y", and scope "toolcall-x", ID "y", name the same workflow.
		unscoped := call(t, "x/toolcall-y", faults.ToolUnsafe, faults.Args{})
		scoped := call(t, "y", faults.ToolUnsafe, faults.Args{})
		scopedClient := tgclient.New(sdk, tgclient.Options{TaskQueue: f.queue, Scope: "toolcall-x"})
		require.Equal(t, cl.WorkflowID(unscoped.ID()), scopedClient.WorkflowID(scoped.ID()))
		fig.Calls += 2
		ctx, cancel := context.WithTimeout(context.Background(), outcomeTimeout)
		defer cancel()
		res, err := cl.Execute(ctx, unscoped)
		require.NoError(t, err)
		assert.True(t, linked(res, unscoped))
		_, err = scopedClient.Execute(ctx, scoped)
		assert.ErrorIs(t, err, wire.ErrCallConflict)
		tally := faults.Count(f.watch.snapshot(t))
		assert.Equal(t, 1, tally.Of(unscoped.ID(), faults.KindRun))
		assert.Zero(t, tally.Of(scoped.ID(), faults.KindRun))
		fig.Detail["scopeConflicts"]++
	})

	t.Run("visibility keeps every ID intact", func(t *testing.T) {
		want := map[string]string{}
		for _, id := range append(slices.Clone(ids), nonASCII...) {
			want[wire.WorkflowID("", id)] = id
		}
		var got map[string]string
		require.Eventually(t, func() bool {
			got = toolCallIDs(t, sdk, "TaskQueue = "+queryString(f.queue))
			for wid := range want {
				if _, ok := got[wid]; !ok {
					return false
				}
			}
			return true
		}, visibilityTimeout, 100*time.Millisecond, "visibility lists every call")
		for wid, id := range want {
			assert.Equal(t, id, got[wid], "ToolCallId of %s in visibility", wid)
		}
		for wid := range got {
			switch {
			case want[wid] != "", wid == "toolcall-hostile-name", wid == "toolcall-x/toolcall-y":
			default:
				t.Errorf("unexpected execution %q: a refused call started", wid)
			}
		}
		tally := faults.Count(f.watch.snapshot(t))
		for id := range tally {
			if want[wire.WorkflowID("", id)] == "" && id != "x/toolcall-y" {
				t.Errorf("a tool ran for %q", id)
			}
		}
	})

	w.interrupt(t)
	jsonLines(t, "faultworker", w.stderrAll())
	report(t, fig, began)
}
