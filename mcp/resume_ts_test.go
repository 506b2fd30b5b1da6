package mcp_test

import (
	"encoding/json"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/internal/testbin"
)

// The official TypeScript SDK client calls resumable with a progress token through a real
// `toolgate mcp --listen`, and the TCP connection carrying the call's SSE answer is cut mid-call
// (cutProxy: after the first report reached the client, once the server sent the second). The
// SDK's transport resumes by itself with GET and the Last-Event-ID of the last event it got,
// receives the report it missed, the last one and the result, each once, and the tool ran once
// (issue 23 item 4). After a silent cut (the server never sees the connection end, so its
// request still holds the stream), the SDK's one GET supersedes that request and is answered
// 200 at once, with the call still running (go-sdk alone answers 409, and the SDK gives up).
func TestTypeScriptClientResumesAfterConnectionCut(t *testing.T) {
	for _, silent := range []bool{false, true} {
		name := map[bool]string{false: "connection cut", true: "connection cut silently"}[silent]
		t.Run(name, func(t *testing.T) { typeScriptResumeAfterCut(t, silent) })
	}
}

func typeScriptResumeAfterCut(t *testing.T, silent bool) {
	f, tools := newResumeFixture(t)
	server := startMCPProcess(t, f)
	endpoint, err := url.Parse(server.url)
	require.NoError(t, err)
	newProxy := map[bool]func(*testing.T, string, string, string) *cutProxy{false: newCutProxy, true: newSilentCutProxy}[silent]
	proxy := newProxy(t, endpoint.Host, strconv.Quote(passedMessage), strconv.Quote(withheldMessage))

	cmd := resumeClient(t, "MCP_URL=http://"+proxy.addr()+endpoint.Path)
	var stdout, stderr testbin.SyncBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	waitUnlessExited := func(signal <-chan struct{}, what string) {
		t.Helper()
		select {
		case <-signal:
		case err := <-exited:
			t.Fatalf("node mcp-resume.mjs exited (%v) before %s: %s\nserver: %s", err, what, stderr.String(), server.log())
		}
	}
	waitUnlessExited(proxy.passed, "the first report reached it")
	close(tools.withheld) // the proxy cuts once the server sent the second report
	waitUnlessExited(proxy.cut, "the cut")
	// The call still runs when the resumption is served: it replayed the withheld report.
	waitUnlessExited(proxy.redelivered, "its resumption replayed the report it missed")
	close(tools.last)
	require.NoError(t, <-exited, "node mcp-resume.mjs: %s\nserver: %s", stderr.String(), server.log())

	var report struct {
		Progress []progressReport `json:"progress"`
		Tokens   []string         `json:"tokens"`
		Errors   []string         `json:"errors"`
		Result   tsToolResult     `json:"result"`
		Error    string           `json:"error"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout.String()), &report), "report: %s", stdout.String())
	require.Empty(t, report.Error, "the call failed; the transport reported %q", report.Errors)
	assert.Equal(t, []progressReport{{1, 3, passedMessage}, {2, 3, withheldMessage}, {3, 3, lastMessage}}, report.Progress,
		"every report once, in order, the one sent while the connection was cut included")
	assert.False(t, report.Result.IsError)
	require.Len(t, report.Result.Content, 1)
	assert.JSONEq(t, `{"runs":1}`, report.Result.Content[0].Text)
	assert.EqualValues(t, 1, tools.runs.Load(), "the call ran once")
	assert.True(t, hasPrefixIn(report.Errors, "SSE stream disconnected"), "the SDK saw its stream break: %q", report.Errors)
	for _, e := range report.Errors {
		assert.True(t, strings.HasPrefix(e, "SSE stream disconnected"), "the only error is the break, no failed resumption: %q", e)
	}

	// The SDK resumed once, from the last event it got before the cut, and sent the call once.
	cutAt := proxy.lastIDBeforeCut()
	require.NotEmpty(t, cutAt, "the client got events with ids before the cut")
	assert.Contains(t, report.Tokens, cutAt)
	proxy.assertOneCallOneResumption(cutAt)
}

// resumeClient returns the command running interop/mcp-resume.mjs with env, failing the test
// with the fix when Node or the SDK is missing.
func resumeClient(t *testing.T, env ...string) *exec.Cmd {
	t.Helper()
	if _, err := os.Stat(filepath.Join(interopDir, "node_modules", "@modelcontextprotocol", "sdk")); err != nil {
		t.Fatalf("the MCP TypeScript SDK is not installed in interop/node_modules: run `make setup` (%v)", err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is missing: install Node.js 20 and run `make setup` (%v)", err)
	}
	cmd := exec.CommandContext(t.Context(), node, "mcp-resume.mjs")
	cmd.Dir = interopDir
	cmd.Env = childEnv(env...)
	return cmd
}

// hasPrefixIn reports whether one of ss starts with prefix.
func hasPrefixIn(ss []string, prefix string) bool {
	for _, s := range ss {
		if strings.HasPrefix(s, prefix) {
			return true
		}
	}
	return false
}
