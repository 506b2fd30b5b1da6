package mcp_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"google.golang.org/protobuf/proto"

	tgclient "github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/internal/devtest"
	"github.com/toolgate/toolgate/toolcore"
)

// `toolgate worker` mounts an HTTP MCP server that requires a bearer token and a tenant header,
// both read from --secrets-dir files: the mounted tool is listed and runs, what the server echoes
// of the token is redacted, a token rotated in its file is used without a restart, and neither
// the worker's /proc/PID/cmdline and environ nor the call's history holds a credential.
func TestWorkerMountsAuthenticatedHTTPServer(t *testing.T) {
	const token, tenant, rotated = "tok-e2e-5f0c9a1b2d3e", "tenant-e2e-7a8b9c0d", "tok-e2e-rotated-77aa"
	url, setServerToken := authServer(t, token, tenant)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "web_token"), []byte(token+"\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "web_tenant"), []byte(tenant), 0o600))
	queue := devtest.TaskQueue(t)
	worker, stderr := startWorkerProcess(t, queue, childEnv(), "--secrets-dir", dir, "--mcp", "web="+url,
		"--mcp-bearer", "web=web_token", "--mcp-header", "web=X-Tenant=web_tenant")
	tg := tgclient.New(devtest.Client(t), tgclient.Options{TaskQueue: queue})
	require.Eventually(t, func() bool {
		tools, err := tg.ListTools(t.Context())
		return err == nil && slices.ContainsFunc(tools, func(info toolcore.ToolInfo) bool { return info.Name == "web_whoami" })
	}, time.Minute, 100*time.Millisecond, "the worker lists web_whoami: %s", stderr)

	res := execute(t, tg, "whoami-secret-1", "web_whoami", `{}`)
	require.False(t, res.IsError(), res.Content())
	assert.Equal(t, "generation 1; you sent Bearer [REDACTED:web_token]", res.Content())

	// Rotated in its file (a rename, as a secret manager's agent writes it) and at the server: the
	// worker's open session is refused once, and the readOnly call's retry reconnects with it.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "web_token.new"), []byte(rotated+"\n"), 0o600))
	require.NoError(t, os.Rename(filepath.Join(dir, "web_token.new"), filepath.Join(dir, "web_token")))
	setServerToken(rotated)
	res = execute(t, tg, "whoami-secret-2", "web_whoami", `{}`)
	require.False(t, res.IsError(), res.Content())
	assert.Equal(t, "generation 2; you sent Bearer [REDACTED:web_token]", res.Content())

	for file, marker := range map[string]string{"cmdline": "--mcp-bearer", "environ": "PATH="} {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/%s", worker.Process.Pid, file))
		require.NoError(t, err)
		require.Contains(t, string(b), marker, "the %s read is the worker's", file)
		for _, credential := range []string{token, tenant, rotated} {
			assert.NotContains(t, string(b), credential, "/proc/PID/%s", file)
		}
	}
	for _, id := range []string{"whoami-secret-1", "whoami-secret-2"} {
		iter := devtest.Client(t).GetWorkflowHistory(t.Context(), "toolcall-"+id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		events := 0
		for iter.HasNext() {
			ev, err := iter.Next()
			require.NoError(t, err)
			raw, err := proto.Marshal(ev)
			require.NoError(t, err)
			events++
			for _, credential := range []string{token, tenant, rotated} {
				assert.False(t, bytes.Contains(raw, []byte(credential)), "event %d of %s holds a credential", ev.GetEventId(), id)
			}
		}
		assert.Positive(t, events, id)
	}
	for _, credential := range []string{token, tenant, rotated} {
		assert.NotContains(t, stderr.String(), credential, "the worker's log")
	}
}
