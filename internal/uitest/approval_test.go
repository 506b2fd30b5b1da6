package uitest

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/internal/testbin"
	"github.com/toolgate/toolgate/toolbox"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// listTimeout bounds the wait for visibility to list a waiting call.
const listTimeout = time.Minute

// TestApprovalThroughTheWebUI holds three write_file calls for approval on a real `toolgate dev`
// and decides them three ways: one through the Web UI's own HTTP API exactly as the UI sends an
// Update (first with a wrong call hash, which the call refuses), one with `toolgate approve`,
// one with `toolgate reject`. Each decision applies once; only approved writes happen.
func TestApprovalThroughTheWebUI(t *testing.T) {
	if testing.Short() {
		t.Skip("approvals: builds toolgate and starts a Temporal server")
	}
	bin, err := testbin.Toolgate()
	require.NoError(t, err)
	root := t.TempDir()
	dev := startDev(t, bin, "--root", root)
	env := childEnv("TEMPORAL_ADDRESS="+dev.frontend, "TEMPORAL_NAMESPACE="+dev.namespace)

	calls := map[string]string{ // call ID -> arguments
		"ui-w1":  `{"path":"ui.txt","content":"approved in the UI"}`,
		"cli-w2": `{"path":"cli.txt","content":"approved by the CLI"}`,
		"cli-w3": `{"path":"rejected.txt","content":"never written"}`,
		"cli-w4": `{"path":"edit.txt","content":"as the model asked"}`,
		"ui-w5":  `{"path":"ui-edit.txt","content":"as the model asked"}`,
	}
	for id, args := range calls {
		runToolgate(t, bin, env, "call", toolbox.NameWriteFile, args, "--id", id, "--detach")
	}
	listed := waitForApprovals(t, bin, env, len(calls))
	for id := range calls {
		assert.Contains(t, listed, "toolcall-"+id)
	}

	t.Run("web UI update", func(t *testing.T) {
		ui := newUIClient(t, dev)
		wid := "toolcall-ui-w1"
		refused := ui.update(t, wid, wire.UpdateApprove, wire.ApprovalDecision{CallHash: "sha256:" + strings.Repeat("0", 64), Reviewer: "ui-reviewer"})
		assert.Contains(t, refused.Outcome.Failure.Message, "call hash", "a decision for another hash is refused: %+v", refused)

		hash := callHash(t, root, "ui-w1", calls["ui-w1"])
		accepted := ui.update(t, wid, wire.UpdateApprove, wire.ApprovalDecision{CallHash: hash, Reviewer: "ui-reviewer"})
		assert.Empty(t, accepted.Outcome.Failure.Message)

		res := runToolgate(t, bin, env, "result", wid)
		assert.Contains(t, res, `"isError":false`)
		assertFile(t, root, "ui.txt", "approved in the UI")

		history := runToolgate(t, bin, env, "history", wid)
		assert.Contains(t, history, "WORKFLOW_EXECUTION_UPDATE_ACCEPTED", "the decision is in history")
		payloads := decodedPayloads(t, history)
		assert.Contains(t, payloads, `"reviewer":"ui-reviewer"`, "who")
		assert.Contains(t, payloads, `"callHash":"`+hash+`"`, "which call")
		assert.Contains(t, payloads, `"decidedAt":"`, "when")
	})

	t.Run("toolgate approve", func(t *testing.T) {
		out := runToolgate(t, bin, env, "approve", "--call-id", "cli-w2", "--yes", "--reviewer", "bob")
		assert.Contains(t, out, callHash(t, root, "cli-w2", calls["cli-w2"]), "approve shows the hash it decides")
		assert.Contains(t, out, "approved by bob")
		assert.Contains(t, runToolgate(t, bin, env, "result", "toolcall-cli-w2"), `"isError":false`)
		assertFile(t, root, "cli.txt", "approved by the CLI")

		code, _, stderr := runToolgateCode(t, bin, env, "approve", "toolcall-cli-w2", "--yes", "--reviewer", "bob")
		assert.Equal(t, 2, code, "a second decision is refused: %s", stderr)
	})

	t.Run("toolgate approve --args", func(t *testing.T) {
		wid := "toolcall-cli-w4"
		code, _, stderr := runToolgateCode(t, bin, env, "approve", wid, "--yes", "--reviewer", "dora",
			"--args", `{"path":"edit.txt","content":7}`)
		assert.Equal(t, 2, code, "an invalid edit is refused: %s", stderr)
		assert.Contains(t, stderr, "content", "with the validator's reason")

		edited := `{"path":"edit.txt","content":"as the reviewer wrote"}`
		runToolgate(t, bin, env, "approve", wid, "--yes", "--reviewer", "dora", "--args", edited)
		var res toolcore.Result
		require.NoError(t, json.Unmarshal([]byte(runToolgate(t, bin, env, "result", wid)), &res))
		assert.False(t, res.IsError(), res.Content())
		assert.True(t, strings.HasPrefix(res.Content(), `reviewer "dora" approved the call with changed arguments: `),
			"the model reads that a reviewer changed the arguments: %s", res.Content())
		assertFile(t, root, "edit.txt", "as the reviewer wrote")

		payloads := decodedPayloads(t, runToolgate(t, bin, env, "history", wid))
		assert.Contains(t, payloads, `"as the model asked"`, "history keeps the original arguments")
		assert.Contains(t, payloads, `"approvedCallHash":"`, "and the hash of the approved ones")
	})

	t.Run("web UI update with edited arguments", func(t *testing.T) {
		ui := newUIClient(t, dev)
		hash := callHash(t, root, "ui-w5", calls["ui-w5"])
		accepted := ui.update(t, "toolcall-ui-w5", wire.UpdateApprove, wire.ApprovalDecision{CallHash: hash, Reviewer: "ui-reviewer",
			Arguments: json.RawMessage(`{"path":"ui-edit.txt","content":"as the UI reviewer wrote"}`)})
		assert.Empty(t, accepted.Outcome.Failure.Message)
		assert.Contains(t, runToolgate(t, bin, env, "result", "toolcall-ui-w5"), "changed arguments")
		assertFile(t, root, "ui-edit.txt", "as the UI reviewer wrote")
	})

	t.Run("toolgate reject", func(t *testing.T) {
		out := runToolgate(t, bin, env, "reject", "toolcall-cli-w3", "--reason", "not that file", "--yes", "--reviewer", "carol",
			"--reviewer-issuer", "https://idp.example")
		assert.Contains(t, out, "rejected by carol (https://idp.example)", "the decision names the reviewer's issuer")
		assert.Contains(t, decodedPayloads(t, runToolgate(t, bin, env, "history", "toolcall-cli-w3")), `"issuer":"https://idp.example"`,
			"the record in history carries the issuer")
		code, stdout, _ := runToolgateCode(t, bin, env, "result", "toolcall-cli-w3")
		assert.Equal(t, 1, code, "an error result")
		var res toolcore.Result
		require.NoError(t, json.Unmarshal([]byte(stdout), &res), stdout)
		assert.Equal(t, toolcore.CodeToolApprovalRejected, res.ErrorCode())
		assert.Equal(t, "rejected by carol: not that file", res.ErrorMessage())
		_, err := os.Stat(filepath.Join(root, "rejected.txt"))
		assert.ErrorIs(t, err, os.ErrNotExist, "a rejected write never happens")
	})

	assert.Empty(t, strings.TrimSpace(runToolgate(t, bin, env, "approvals")), "nothing waits any more")
}

// decodedPayloads returns the decoded "data" of every payload in an exported history, joined.
func decodedPayloads(t *testing.T, history string) string {
	t.Helper()
	var doc any
	require.NoError(t, json.Unmarshal([]byte(history), &doc))
	var out strings.Builder
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				if s, ok := e.(string); ok && k == "data" {
					if b, err := base64.StdEncoding.DecodeString(s); err == nil {
						out.Write(b)
						out.WriteByte('\n')
					}
				}
				walk(e)
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(doc)
	return out.String()
}

// callHash computes the hash a reviewer must name, independently of the running worker.
func callHash(t *testing.T, root, id, args string) string {
	t.Helper()
	reg, err := toolbox.New(toolbox.Config{Root: root})
	require.NoError(t, err)
	tool, ok := reg.Get(toolbox.NameWriteFile)
	require.True(t, ok)
	call, err := toolcore.NewToolCall(id, toolbox.NameWriteFile, []byte(args))
	require.NoError(t, err)
	return toolcore.CallHash(tool, call)
}

func assertFile(t *testing.T, root, name, want string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, name))
	require.NoError(t, err)
	assert.Equal(t, want, string(data))
}

// waitForApprovals polls `toolgate approvals` until it lists n calls (visibility lags history).
func waitForApprovals(t *testing.T, bin string, env []string, n int) string {
	t.Helper()
	deadline := time.Now().Add(listTimeout)
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		out := runToolgate(t, bin, env, "approvals")
		if lines := strings.Count(out, "\n"); lines >= n {
			return out
		}
		if time.Now().After(deadline) {
			require.FailNow(t, "approvals did not list the waiting calls", "within %s; last output:\n%s", listTimeout, out)
		}
		<-tick.C
	}
}

// runToolgateCode runs one toolgate command and returns its exit code, stdout and stderr.
func runToolgateCode(t *testing.T, bin string, env []string, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), runTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		require.NoError(t, err, "toolgate %s", strings.Join(args, " "))
	}
	return cmd.ProcessState.ExitCode(), stdout.String(), stderr.String()
}

// uiClient talks to the Web UI server the way the UI's browser code does: it loads a page to
// get the _csrf cookie, then sends the cookie and the X-CSRF-Token header with every write.
type uiClient struct {
	http      *http.Client
	base      string
	namespace string
	csrf      string
}

func newUIClient(t *testing.T, d dev) *uiClient {
	t.Helper()
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	c := &uiClient{http: &http.Client{Jar: jar, Timeout: runTimeout}, base: d.ui, namespace: d.namespace}
	resp, err := c.http.Get(d.ui + "/")
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	u, err := url.Parse(d.ui)
	require.NoError(t, err)
	for _, ck := range jar.Cookies(u) {
		if ck.Name == "_csrf" {
			c.csrf = ck.Value
		}
	}
	require.NotEmpty(t, c.csrf, "the UI server set no _csrf cookie")
	return c
}

// updateResponse is the part of UpdateWorkflowExecutionResponse the test reads.
type updateResponse struct {
	Stage   string `json:"stage"`
	Outcome struct {
		Success json.RawMessage `json:"success"`
		Failure struct {
			Message string `json:"message"`
		} `json:"failure"`
	} `json:"outcome"`
}

// update sends a Workflow Update like the UI's updateWorkflow: POST
// /api/v1/namespaces/{namespace}/workflows/{workflowId}/update/{name} with the JSON input as one
// json/plain payload, and waits (as the server does for the UI) until the update is accepted or
// refused.
func (c *uiClient) update(t *testing.T, workflowID, name string, arg any) updateResponse {
	t.Helper()
	data, err := json.Marshal(arg)
	require.NoError(t, err)
	body, err := json.Marshal(map[string]any{
		"workflowExecution": map[string]any{},
		"request": map[string]any{
			"meta": map[string]any{"updateId": fmt.Sprintf("ui-%s-%d", name, time.Now().UnixNano()), "identity": "web-ui-test"},
			"input": map[string]any{"args": map[string]any{"payloads": []any{map[string]any{
				"metadata": map[string]string{"encoding": base64.StdEncoding.EncodeToString([]byte("json/plain"))},
				"data":     base64.StdEncoding.EncodeToString(data),
			}}}},
		},
	})
	require.NoError(t, err)
	endpoint := c.base + "/api/v1/namespaces/" + url.PathEscape(c.namespace) + "/workflows/" + url.PathEscape(workflowID) + "/update/" + url.PathEscape(name)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, endpoint, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-CSRF-Token", c.csrf)
	resp, err := c.http.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "POST %s: %s", endpoint, raw)
	var out updateResponse
	require.NoError(t, json.Unmarshal(raw, &out), "%s", raw)
	return out
}
