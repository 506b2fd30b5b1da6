package mcp_test

import (
	"bufio"
	"bytes"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/toolgate/toolgate/internal/devtest"
	"github.com/toolgate/toolgate/mcp"
	"github.com/toolgate/toolgate/wire"
)

// rawSession is a hand-rolled MCP session over streamable HTTP (the task methods are not in the
// Go SDK's client), with an optional bearer token.
type rawSession struct {
	t     *testing.T
	url   string
	token string
	id    string // Mcp-Session-Id
	next  int
}

// rpcReply is a JSON-RPC response.
type rpcReply struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func newRawSession(t *testing.T, url, token string) *rawSession {
	s := &rawSession{t: t, url: url, token: token}
	resp, reply := s.post("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "raw", "version": "1"}})
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Nil(t, reply.Error)
	s.id = resp.Header.Get("Mcp-Session-Id")
	require.NotEmpty(t, s.id)
	s.notify("notifications/initialized")
	return s
}

func (s *rawSession) request(body []byte) *http.Request {
	req, err := http.NewRequestWithContext(s.t.Context(), http.MethodPost, s.url, bytes.NewReader(body))
	require.NoError(s.t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if s.token != "" {
		req.Header.Set("Authorization", "Bearer "+s.token)
	}
	if s.id != "" {
		req.Header.Set("Mcp-Session-Id", s.id)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	}
	return req
}

func (s *rawSession) notify(method string) {
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": method})
	require.NoError(s.t, err)
	resp, err := http.DefaultClient.Do(s.request(body))
	require.NoError(s.t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
}

// post sends one request and returns the response and its JSON-RPC reply (from JSON or SSE).
func (s *rawSession) post(method string, params any) (*http.Response, rpcReply) {
	s.next++
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": s.next, "method": method, "params": params})
	require.NoError(s.t, err)
	resp, err := http.DefaultClient.Do(s.request(body))
	require.NoError(s.t, err)
	defer resp.Body.Close()
	var reply rpcReply
	if resp.StatusCode != http.StatusOK {
		return resp, reply
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				var probe struct {
					ID *int `json:"id"`
				}
				if json.Unmarshal([]byte(data), &probe) == nil && probe.ID != nil {
					require.NoError(s.t, json.Unmarshal([]byte(data), &reply))
					return resp, reply
				}
			}
		}
		s.t.Fatalf("%s: no reply in the event stream", method)
	}
	require.NoError(s.t, json.NewDecoder(resp.Body).Decode(&reply))
	return resp, reply
}

// call sends method and returns its result; a JSON-RPC error fails the test.
func (s *rawSession) call(method string, params any) json.RawMessage {
	s.t.Helper()
	resp, reply := s.post(method, params)
	require.Equal(s.t, http.StatusOK, resp.StatusCode, method)
	require.Nil(s.t, reply.Error, "%s: %+v", method, reply.Error)
	return reply.Result
}

// callErr sends method and returns its JSON-RPC error message; a result fails the test.
func (s *rawSession) callErr(method string, params any) string {
	s.t.Helper()
	resp, reply := s.post(method, params)
	require.Equal(s.t, http.StatusOK, resp.StatusCode, method)
	require.NotNil(s.t, reply.Error, "%s answered %s", method, reply.Result)
	return reply.Error.Message
}

// jwtKeyFile writes the signer's public key as PEM for --auth-jwt-key-file.
func jwtKeyFile(t *testing.T, s signer) string {
	der, err := x509.MarshalPKIXPublicKey(s.key.Public())
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "key.pem")
	require.NoError(t, os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), 0o600))
	return path
}

func tokenFor(t *testing.T, s signer, sub string) string {
	c := validClaims()
	c["sub"] = sub
	return s.token(t, c)
}

// `toolgate mcp --listen` on an address beyond loopback (0.0.0.0, ::, :PORT) without
// authentication exits non-zero before serving and says why; with --insecure-no-auth it serves
// and warns.
func TestMCPListenBeyondLoopbackNeedsAuth(t *testing.T) {
	f := newFixture(t)
	for _, listen := range []string{"0.0.0.0:0", ":0", "[::]:0"} {
		t.Run(listen, func(t *testing.T) {
			args := mcpCommand(t, f, "--listen", listen)
			cmd := exec.Command(args[0], args[1:]...)
			cmd.Env = childEnv()
			out, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			require.ErrorAs(t, err, &exit, "toolgate mcp --listen %s started without auth: %s", listen, out)
			assert.NotZero(t, exit.ExitCode())
			assert.Contains(t, string(out), "is not a loopback address")
			assert.Contains(t, string(out), "--auth-token-file")
			assert.NotContains(t, string(out), "MCP streamable HTTP on", "it never served")
		})
	}
	p := startMCPProcess(t, f, "--listen", "0.0.0.0:0", "--insecure-no-auth")
	assert.Contains(t, p.log(), "WITHOUT authentication (--insecure-no-auth)")
}

// A LAN peer's request ("Host: localhost", no token) against the real process with a static
// token or JWTs gets 401 with WWW-Authenticate; wrong, expired and wrong-audience tokens get
// 401; a valid one serves; the protected-resource metadata is served.
func TestMCPProcessRequiresBearerToken(t *testing.T) {
	f := newFixture(t)
	tokenFile := filepath.Join(t.TempDir(), "token")
	require.NoError(t, os.WriteFile(tokenFile, []byte("s3cret-static-token-0123456789\n"), 0o600))
	static := startMCPProcess(t, f, "--auth-token-file", tokenFile)

	s := newRSASigner(t, "")
	jwtProc := startMCPProcess(t, f, "--auth-jwt-key-file", jwtKeyFile(t, s), "--auth-resource", testResource,
		"--auth-server", "https://id.example.test")
	expired := validClaims()
	expired["exp"] = time.Now().Add(-time.Hour).Unix()
	wrongAud := validClaims()
	wrongAud["aud"] = "https://other.example.test/mcp"

	for _, tt := range []struct {
		name, url, authorization string
		want                     int
	}{
		{"static: LAN peer without token", static.url, "", http.StatusUnauthorized},
		{"static: wrong token", static.url, "Bearer s3cret-static-token-0123456788", http.StatusUnauthorized},
		{"static: the token", static.url, "Bearer s3cret-static-token-0123456789", http.StatusOK},
		{"jwt: LAN peer without token", jwtProc.url, "", http.StatusUnauthorized},
		{"jwt: expired", jwtProc.url, "Bearer " + s.token(t, expired), http.StatusUnauthorized},
		{"jwt: wrong audience", jwtProc.url, "Bearer " + s.token(t, wrongAud), http.StatusUnauthorized},
		{"jwt: bad signature", jwtProc.url, "Bearer " + newRSASigner(t, "").token(t, validClaims()), http.StatusUnauthorized},
		{"jwt: valid", jwtProc.url, "Bearer " + s.token(t, validClaims()), http.StatusOK},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp := postInitialize(t, tt.url, "localhost", tt.authorization)
			assert.Equal(t, tt.want, resp.StatusCode)
			if tt.want == http.StatusUnauthorized {
				assert.True(t, strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer "), resp.Header.Get("WWW-Authenticate"))
			}
		})
	}
	resp := postInitialize(t, jwtProc.url, "localhost", "")
	assert.Equal(t, `Bearer resource_metadata="`+mcp.ResourceMetadataURL(testResource)+`"`, resp.Header.Get("WWW-Authenticate"))
	metaResp, err := http.Get(strings.TrimSuffix(jwtProc.url, "/mcp") + mcp.ProtectedResourcePath + "/mcp")
	require.NoError(t, err)
	defer metaResp.Body.Close()
	var meta map[string]any
	require.NoError(t, json.NewDecoder(metaResp.Body).Decode(&meta))
	assert.Equal(t, testResource, meta["resource"])
	assert.Equal(t, []any{"https://id.example.test"}, meta["authorization_servers"])
}

// Tasks belong to their caller, against the real process with JWTs for alice and bob: bob
// cannot get, result, cancel or list alice's task, nor cancel an AgentWorkflow by its ID (not
// even one whose ID is in his own scope); bob's idempotency key deploy-42 names his own call,
// not alice's (no conflict, no word of hers); `toolgate call --id deploy-42` afterwards runs
// its own call; alice, from a restarted process, still sees and gets her task.
func TestMCPTasksBelongToTheirCaller(t *testing.T) {
	f := newFixture(t)
	s := newRSASigner(t, "")
	flags := []string{"--auth-jwt-key-file", jwtKeyFile(t, s), "--auth-resource", testResource}
	p := startMCPProcess(t, f, flags...)
	alice := newRawSession(t, p.url, tokenFor(t, s, "alice"))
	bob := newRawSession(t, p.url, tokenFor(t, s, "bob"))

	gate := f.tools.hold("iso-alice")
	taskCall := func(sess *rawSession, key, countKey string) string {
		var created struct {
			Task mcp.Task `json:"task"`
		}
		require.NoError(t, json.Unmarshal(sess.call("tools/call", map[string]any{
			"name": "count", "arguments": map[string]any{"key": countKey}, "task": map[string]any{},
			"_meta": map[string]any{mcp.IdempotencyKeyMeta: key},
		}), &created))
		return created.Task.TaskID
	}
	aliceTask := taskCall(alice, "deploy-42", "iso-alice")
	require.Equal(t, "iso-alice", <-f.tools.started)
	assert.True(t, strings.HasPrefix(aliceTask, mcp.PrincipalScope("https://id.example.test\nalice")+"/toolcall-"), aliceTask)
	assert.NotContains(t, aliceTask, "alice", "the subject is not in the ID")

	for _, method := range []string{wire.MCPMethodTasksGet, wire.MCPMethodTasksResult, wire.MCPMethodTasksCancel} {
		assert.Equal(t, "task "+aliceTask+" not found", bob.callErr(method, map[string]any{"taskId": aliceTask}), method)
	}

	// Bob's deploy-42 is his own call: no conflict with alice's (another tool argument).
	bobTask := taskCall(bob, "deploy-42", "iso-bob")
	assert.NotEqual(t, aliceTask, bobTask)
	listed := func(sess *rawSession) []string {
		var list struct {
			Tasks []mcp.Task `json:"tasks"`
		}
		require.NoError(t, json.Unmarshal(sess.call(wire.MCPMethodTasksList, map[string]any{}), &list))
		var ids []string
		for _, task := range list.Tasks {
			ids = append(ids, task.TaskID)
		}
		return ids
	}
	require.Eventually(t, func() bool { return len(listed(bob)) > 0 }, 30*time.Second, 100*time.Millisecond, "bob's task is listed")
	assert.Equal(t, []string{bobTask}, listed(bob), "bob lists his task only")

	// AgentWorkflows: one with a plain ID, one with an ID in bob's own scope. No worker polls
	// their queue, so they stay running unless canceled.
	c := devtest.Client(t)
	for _, id := range []string{"agent-iso-1", strings.TrimSuffix(bobTask, "deploy-42") + "agent"} {
		run, err := c.ExecuteWorkflow(t.Context(), client.StartWorkflowOptions{ID: id, TaskQueue: devtest.TaskQueue(t)}, "AgentWorkflow") // examples/agent's workflow type
		require.NoError(t, err)
		before, err := c.DescribeWorkflowExecution(t.Context(), id, run.GetRunID())
		require.NoError(t, err)
		for _, method := range []string{wire.MCPMethodTasksGet, wire.MCPMethodTasksResult, wire.MCPMethodTasksCancel} {
			assert.Equal(t, "task "+id+" not found", bob.callErr(method, map[string]any{"taskId": id}), method)
		}
		desc, err := c.DescribeWorkflowExecution(t.Context(), id, run.GetRunID())
		require.NoError(t, err)
		assert.Equal(t, enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, desc.GetWorkflowExecutionInfo().GetStatus())
		assert.Equal(t, before.GetWorkflowExecutionInfo().GetHistoryLength(), desc.GetWorkflowExecutionInfo().GetHistoryLength(),
			"no event was added to the agent's history (no signal, update or cancel request)")
		require.NoError(t, c.TerminateWorkflow(t.Context(), id, run.GetRunID(), "test done"))
	}

	// toolgate call --id deploy-42: its own namespace of IDs.
	srv := devtest.Server(t)
	cli := exec.Command(toolgateBinary(t), "call", "--address", srv.FrontendAddress(), "--namespace", srv.Namespace(),
		"--task-queue", f.queue, "--id", "deploy-42", "echo", `{"text":"cli"}`)
	cli.Env = childEnv()
	out, err := cli.CombinedOutput()
	require.NoError(t, err, "toolgate call --id deploy-42 after MCP clients used key deploy-42: %s", out)
	assert.Contains(t, string(out), "cli")
	// The CLI's call is no MCP principal's task: neither its status nor its result is readable.
	cliCall := wire.WorkflowID("", "deploy-42")
	_, err = c.DescribeWorkflowExecution(t.Context(), cliCall, "")
	require.NoError(t, err, "the CLI's call has this workflow ID")
	for _, sess := range []*rawSession{alice, bob} {
		for _, method := range []string{wire.MCPMethodTasksGet, wire.MCPMethodTasksResult} {
			assert.Equal(t, "task "+cliCall+" not found", sess.callErr(method, map[string]any{"taskId": cliCall}), method)
		}
	}

	// Alice, through a restarted process, still owns her task.
	require.NoError(t, p.cmd.Process.Kill())
	p2 := startMCPProcess(t, f, flags...)
	alice = newRawSession(t, p2.url, tokenFor(t, s, "alice"))
	bob = newRawSession(t, p2.url, tokenFor(t, s, "bob"))
	assert.Equal(t, "task "+aliceTask+" not found", bob.callErr(wire.MCPMethodTasksCancel, map[string]any{"taskId": aliceTask}))
	require.Eventually(t, func() bool { return len(listed(alice)) > 0 }, 30*time.Second, 100*time.Millisecond)
	assert.Equal(t, []string{aliceTask}, listed(alice))
	close(gate)
	var result struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	require.NoError(t, json.Unmarshal(alice.call(wire.MCPMethodTasksResult, map[string]any{"taskId": aliceTask}), &result))
	require.Len(t, result.Content, 1)
	assert.JSONEq(t, `{"runs":1}`, result.Content[0].Text)

}
