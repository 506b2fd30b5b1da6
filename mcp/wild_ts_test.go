package mcp_test

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runWildClient runs interop/mcp-wild.mjs SCENARIO (the official TypeScript SDK 1.x client) and
// decodes its report.
func runWildClient(t *testing.T, scenario string, env []string, report any) {
	t.Helper()
	cmd := typeScriptClient(t, scenario, env) // checks Node and the SDK
	cmd = exec.CommandContext(t.Context(), cmd.Path, "mcp-wild.mjs", scenario)
	cmd.Dir = interopDir
	cmd.Env = childEnv(env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "node mcp-wild.mjs %s: %s", scenario, stderr.String())
	require.NoError(t, json.Unmarshal(stdout.Bytes(), report), "report: %s", stdout.String())
}

type wildRequest struct {
	Method      string  `json:"method"`
	LastEventID *string `json:"lastEventId"`
	Status      int     `json:"status"`
	ContentType string  `json:"contentType"`
}

// Over stdio the TypeScript SDK client gets the last progress report of every call, also when
// it comes just before the result (issue 34 item 5: the server pings the client before such a
// result, so the report is handled before the result settles the call).
func TestTypeScriptClientGetsLastProgressOverStdio(t *testing.T) {
	f := newFixture(t)
	var report struct {
		Calls  []*progressReport `json:"calls"`
		Logged []string          `json:"logged"`
	}
	runWildClient(t, "progress", append(stdioEnv(t, f), "MCP_CALLS=8"), &report)
	require.Len(t, report.Calls, 8)
	for i, last := range report.Calls {
		require.NotNil(t, last, "call %d got no report", i)
		assert.EqualValues(t, 100, last.Progress, "call %d: its last report", i)
	}
	assert.Empty(t, report.Logged, "no unknown progress token")
}

// Over streamable HTTP an ordinary error reply is answered as JSON, so the TypeScript SDK 1.x
// tries no resumption (it resumes a stream with an event ID that ends without a result); a
// cancelled request gets no reply at all, over stdio and HTTP, and the client logs nothing: no
// unknown response, no failed resumption (issue 34 item 5).
func TestTypeScriptClientErrorsAndCancelAreQuiet(t *testing.T) {
	f := newFixture(t)
	server := startMCPProcess(t, f)
	var errs struct {
		Unknown  *struct{ Code int } `json:"unknown"`
		Conflict *struct{ Code int } `json:"conflict"`
		Logged   []string            `json:"logged"`
		Requests []wildRequest       `json:"requests"`
	}
	runWildClient(t, "errors", server.env(), &errs)
	require.NotNil(t, errs.Unknown)
	require.NotNil(t, errs.Conflict)
	assert.Empty(t, errs.Logged)
	for _, r := range errs.Requests {
		assert.Nil(t, r.LastEventID, "no resumption: %+v", errs.Requests)
		if r.Method == "POST" && r.Status == 200 {
			assert.Equal(t, "application/json", r.ContentType, "a reply that comes first is JSON: %+v", r)
		}
	}

	for name, env := range map[string][]string{"stdio": stdioEnv(t, f), "http": server.env()} {
		t.Run("cancel "+name, func(t *testing.T) {
			var report struct {
				Outcome  *struct{ Message string } `json:"outcome"`
				Logged   []string                  `json:"logged"`
				Requests []wildRequest             `json:"requests"`
			}
			runWildClient(t, "cancel", append(env, "MCP_KEY=wild-cancel-"+name), &report)
			require.NotNil(t, report.Outcome, "the aborted call rejects")
			assert.Empty(t, report.Logged, "no reply to the cancelled request, no failed resumption")
			for _, r := range report.Requests {
				if r.LastEventID != nil {
					assert.Equal(t, 204, r.Status, "a finished stream's resumption has nothing: %+v", r)
				}
			}
		})
	}
}
