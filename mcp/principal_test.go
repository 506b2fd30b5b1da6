package mcp_test

import (
	"bufio"
	"context"
	"crypto"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	"google.golang.org/protobuf/proto"

	tgclient "github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/internal/devtest"
	"github.com/toolgate/toolgate/mcp"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// principalTools serve the principal tests: "whoami" answers toolcore.CallPrincipal, "single"
// runs one call at a time (MaxConcurrent 1), records the order calls start in, and holds a call
// whose tag a test gates.
type principalTools struct {
	mu      sync.Mutex
	order   []string
	gates   map[string]chan struct{}
	started chan string
}

type tagArgs struct {
	Tag string `json:"tag"`
}

func newPrincipalTools(t *testing.T) (*principalTools, *tgclient.Client, []toolcore.ToolInfo) {
	pt := &principalTools{gates: map[string]chan struct{}{}, started: make(chan string, 64)}
	reg, err := toolcore.NewRegistry(
		toolcore.MustDefine(toolcore.Definition[noArgs]{
			Name:        "whoami",
			Description: "The principal this call runs for.",
			Execute: func(ctx context.Context, _ noArgs) (any, error) {
				p, ok := toolcore.CallPrincipal(ctx)
				return map[string]any{"principal": p, "ok": ok}, nil
			},
			Options: toolcore.Options{SideEffect: toolcore.ReadOnly},
		}),
		toolcore.MustDefine(toolcore.Definition[tagArgs]{
			Name:        "single",
			Description: "One call at a time; records its start.",
			Execute: func(ctx context.Context, a tagArgs) (any, error) {
				pt.mu.Lock()
				pt.order = append(pt.order, a.Tag)
				gate := pt.gates[a.Tag]
				pt.mu.Unlock()
				pt.started <- a.Tag
				if gate != nil {
					select {
					case <-gate:
					case <-ctx.Done():
						return nil, ctx.Err()
					}
				}
				return a.Tag, nil
			},
			Options: toolcore.Options{SideEffect: toolcore.ReadOnly, MaxConcurrent: 1},
		}),
	)
	require.NoError(t, err)
	tg, _ := servingWorker(t, reg)
	infos, err := tg.ListTools(t.Context())
	require.NoError(t, err)
	return pt, tg, infos
}

func (pt *principalTools) hold(tag string) func() {
	pt.mu.Lock()
	defer pt.mu.Unlock()
	gate := make(chan struct{})
	pt.gates[tag] = gate
	var once sync.Once
	return func() { once.Do(func() { close(gate) }) }
}

func (pt *principalTools) startOrder() []string {
	pt.mu.Lock()
	defer pt.mu.Unlock()
	return slices.Clone(pt.order)
}

// jwtServer serves s over HTTP behind a JWT verifier of signer's key; token signs a token for
// sub with the extra claims.
func jwtServer(t *testing.T, s *sdk.Server, opts mcp.HTTPOptions) (url string, token func(sub string, extra map[string]any) string) {
	signer := newRSASigner(t, "")
	verifier, err := mcp.JWTVerifier(mcp.JWTOptions{Audience: testResource, Keys: []crypto.PublicKey{signer.key.Public()}})
	require.NoError(t, err)
	opts.Verifier = verifier
	srv := httptest.NewServer(mcp.HTTPHandler(s, opts))
	t.Cleanup(srv.Close)
	return srv.URL, func(sub string, extra map[string]any) string {
		c := validClaims()
		c["sub"] = sub
		for k, v := range extra {
			c[k] = v
		}
		return signer.token(t, jwt.MapClaims(c))
	}
}

// memoPrincipal is the principal recorded in the start memo of workflowID.
func memoPrincipal(t *testing.T, workflowID string) map[string]any {
	desc, err := devtest.Client(t).DescribeWorkflowExecution(t.Context(), workflowID, "")
	require.NoError(t, err)
	field := desc.GetWorkflowExecutionInfo().GetMemo().GetFields()[wire.MemoPrincipal]
	require.NotNil(t, field, "the start memo holds %s", wire.MemoPrincipal)
	var p map[string]any
	require.NoError(t, json.Unmarshal(field.GetData(), &p))
	return p
}

// Every call an MCP request with a verified token starts runs for the token's principal (issue
// 32 item 1): a tools/call of 2025-11-25, a task-augmented one and a 2026-07-28 one reach the
// tool with toolcore.CallPrincipal = the token's issuer and subject, its tenant, name and groups
// from the configured claims, authenticatedBy "mcp", and the call's start memo records the same;
// a claim of the wrong type is left out. A call without a token (the server's own principal)
// runs for no principal.
func TestMCPCallRunsForItsPrincipal(t *testing.T) {
	_, tg, infos := newPrincipalTools(t)
	server := mcp.NewServer(tg, infos, mcp.Options{PrincipalClaims: mcp.PrincipalClaims{Tenant: "tid"}})
	url, token := jwtServer(t, server, mcp.HTTPOptions{})
	alice := token("alice", map[string]any{"tid": "tenant-9", "name": "Alice A.", "groups": []any{"ops", "dev", "ops", 7}, "tenant": "ignored"})
	want := map[string]any{"issuer": "https://id.example.test", "subject": "alice", "tenant": "tenant-9", "name": "Alice A.",
		"groups": []any{"ops", "dev"}, "authenticatedBy": toolcore.AuthenticatedByMCP}

	whoami := func(t *testing.T, content string) map[string]any {
		var out struct {
			Principal map[string]any `json:"principal"`
			OK        bool           `json:"ok"`
		}
		require.NoError(t, json.Unmarshal([]byte(content), &out), content)
		require.True(t, out.OK, "the tool runs for a principal: %s", content)
		return out.Principal
	}

	t.Run("2025-11-25", func(t *testing.T) {
		cs := connectRevision(t, &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearerTransport(alice)}}, "2025-11-25")
		res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "whoami", Arguments: map[string]any{}})
		require.NoError(t, err)
		require.False(t, res.IsError, text(t, res))
		assert.Equal(t, want, whoami(t, text(t, res)))
		workflowID, _ := res.Meta[mcp.WorkflowIDMeta].(string)
		assert.Equal(t, want, memoPrincipal(t, workflowID))
	})
	t.Run("task", func(t *testing.T) {
		sess := newRawSession(t, url, alice)
		var created struct {
			Task mcp.Task `json:"task"`
		}
		require.NoError(t, json.Unmarshal(sess.call("tools/call", map[string]any{"name": "whoami", "arguments": map[string]any{}, "task": map[string]any{}}), &created))
		var res sdk.CallToolResult
		require.NoError(t, json.Unmarshal(sess.call(wire.MCPMethodTasksResult, map[string]any{"taskId": created.Task.TaskID}), &res))
		assert.Equal(t, want, whoami(t, text(t, &res)))
		assert.Equal(t, want, memoPrincipal(t, created.Task.TaskID))
	})
	t.Run("2026-07-28", func(t *testing.T) {
		resp, body := post2026(t, url, "tools/call", map[string]any{"name": "whoami", "arguments": map[string]any{}},
			http.Header{"Authorization": {"Bearer " + alice}})
		require.Equal(t, http.StatusOK, resp.StatusCode, body)
		var reply struct {
			Result sdk.CallToolResult `json:"result"`
		}
		_, data, _ := strings.Cut(body, "data: ")
		if data == "" {
			data = body
		}
		require.NoError(t, json.NewDecoder(strings.NewReader(data)).Decode(&reply), body)
		assert.Equal(t, want, whoami(t, text(t, &reply.Result)))
	})
	t.Run("no token", func(t *testing.T) {
		cs := connectInMemory(t, server)
		res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "whoami", Arguments: map[string]any{}})
		require.NoError(t, err)
		assert.JSONEq(t, `{"principal":{"subject":""},"ok":false}`, text(t, res))
	})
}

// Fair shares (issue 32 item 4): principal F floods a one-at-a-time tool with 20 task calls
// asking for everything _meta offers (priority 1, weight 1e6, V's own fairness key) while its
// first call runs; V then calls once. V's call starts after at most one more of F's: F's _meta
// is clamped to the default grant (priority 3, weight 1) and its fairness key is its own
// principal's. Asserted on the order the tool saw the calls start, not on timing. A principal
// that a grant names gets what it grants.
func TestMCPFloodingPrincipalTakesOnlyItsShare(t *testing.T) {
	pt, tg, infos := newPrincipalTools(t)
	grants := mcp.Grants{}
	require.NoError(t, grants.Add("group:ops=priority:1,weight:4"))
	server := mcp.NewServer(tg, infos, mcp.Options{Grants: grants})
	url, token := jwtServer(t, server, mcp.HTTPOptions{})
	flooder := newRawSession(t, url, token("flooder", nil))
	victim := newRawSession(t, url, token("victim", nil))
	victimKey := tgclient.PrincipalFairnessKey(toolcore.Principal{Issuer: "https://id.example.test", Subject: "victim"})
	c := devtest.Client(t)

	task := func(sess *rawSession, tag string, meta map[string]any) string {
		var created struct {
			Task mcp.Task `json:"task"`
		}
		params := map[string]any{"name": "single", "arguments": map[string]any{"tag": tag}, "task": map[string]any{}}
		if meta != nil {
			params["_meta"] = meta
		}
		require.NoError(t, json.Unmarshal(sess.call("tools/call", params), &created))
		return created.Task.TaskID
	}
	scheduled := func(ids ...string) {
		for _, id := range ids {
			require.Eventually(t, func() bool {
				desc, err := c.DescribeWorkflowExecution(t.Context(), id, "")
				return err == nil && (len(desc.GetPendingActivities()) > 0 || desc.GetWorkflowExecutionInfo().GetCloseTime() != nil)
			}, time.Minute, 10*time.Millisecond, "call %s scheduled", id)
		}
	}

	release := pt.hold("F-0")
	defer release()
	task(flooder, "F-0", nil)
	require.Equal(t, "F-0", <-pt.started, "F's first call holds the tool")
	metas := []map[string]any{
		{mcp.PriorityMeta: 1},
		{mcp.FairnessWeightMeta: 1e6},
		{mcp.FairnessKeyMeta: victimKey},
		{mcp.PriorityMeta: 1, mcp.FairnessWeightMeta: 1e6, mcp.FairnessKeyMeta: victimKey},
	}
	var flood []string
	for i := range 20 {
		flood = append(flood, task(flooder, fmt.Sprintf("F-%d", i+1), metas[i%len(metas)]))
	}
	scheduled(flood...)
	v := task(victim, "V", nil)
	scheduled(v)
	require.Equal(t, []string{"F-0"}, pt.startOrder(), "nothing else started while F-0 holds the tool")
	release()
	for range 21 {
		select {
		case <-pt.started:
		case <-t.Context().Done():
			t.Fatal("the calls did not all start")
		}
	}
	order := pt.startOrder()
	at := slices.Index(order, "V")
	assert.LessOrEqual(t, at-1, 1, "V waits for at most one more of F's calls: %v", order)

	flooderKey := tgclient.PrincipalFairnessKey(toolcore.Principal{Issuer: "https://id.example.test", Subject: "flooder"})
	desc, err := c.DescribeWorkflowExecution(t.Context(), flood[3], "")
	require.NoError(t, err)
	assert.True(t, proto.Equal(&commonpb.Priority{PriorityKey: 3, FairnessKey: flooderKey, FairnessWeight: 1}, desc.GetWorkflowExecutionInfo().GetPriority()),
		"F's _meta clamped, its key its own: %v", desc.GetWorkflowExecutionInfo().GetPriority())

	// A member of ops gets what its grant allows, no more.
	ops := newRawSession(t, url, token("operator", map[string]any{"groups": []any{"ops"}}))
	granted := task(ops, "ops", map[string]any{mcp.PriorityMeta: 1, mcp.FairnessWeightMeta: 9})
	desc, err = c.DescribeWorkflowExecution(t.Context(), granted, "")
	require.NoError(t, err)
	opsKey := tgclient.PrincipalFairnessKey(toolcore.Principal{Issuer: "https://id.example.test", Subject: "operator"})
	assert.True(t, proto.Equal(&commonpb.Priority{PriorityKey: 1, FairnessKey: opsKey, FairnessWeight: 4}, desc.GetWorkflowExecutionInfo().GetPriority()),
		"%v", desc.GetWorkflowExecutionInfo().GetPriority())
}

// Grants: Add parses SELECTOR=priority:N,weight:W; For picks a principal's entry over its
// groups' (the best of those) over the default; Clamp keeps a call's level and weight within the
// grant and its fairness key the principal's.
func TestGrantsClamp(t *testing.T) {
	var g mcp.Grants
	require.NoError(t, g.Add("principal:https://idp alice=priority:2"))
	require.NoError(t, g.Add("group:ops=priority:1,weight:4"))
	require.NoError(t, g.Add("group:batch=priority:5,weight:8"))
	for _, bad := range []string{"alice=priority:2", "group:=priority:1", "*=priority:0", "*=priority:6", "*=weight:-1", "*=speed:3", "*"} {
		assert.Error(t, g.Add(bad), bad)
	}
	alice := toolcore.Principal{Issuer: "https://idp", Subject: "alice", Groups: []string{"ops"}}
	tests := []struct {
		name  string
		give  toolcore.Principal
		asked wire.Priority
		want  wire.Priority
	}{
		{name: "default: unset stays unset", give: toolcore.Principal{Subject: "bob"}, want: wire.Priority{}},
		{name: "default: priority 1 is 3", give: toolcore.Principal{Subject: "bob"}, asked: wire.Priority{Level: 1}, want: wire.Priority{Level: 3}},
		{name: "default: weight 1e6 is 1", give: toolcore.Principal{Subject: "bob"}, asked: wire.Priority{FairnessWeight: 1e6}, want: wire.Priority{FairnessWeight: 1}},
		{name: "default: worse asked is kept", give: toolcore.Principal{Subject: "bob"}, asked: wire.Priority{Level: 5, FairnessWeight: 0.5}, want: wire.Priority{Level: 5, FairnessWeight: 0.5}},
		{name: "principal entry wins over its group", give: alice, asked: wire.Priority{Level: 1, FairnessWeight: 3}, want: wire.Priority{Level: 2, FairnessWeight: 1}},
		{name: "group", give: toolcore.Principal{Subject: "carol", Groups: []string{"ops"}}, asked: wire.Priority{Level: 1, FairnessWeight: 9}, want: wire.Priority{Level: 1, FairnessWeight: 4}},
		{name: "best of groups", give: toolcore.Principal{Subject: "dan", Groups: []string{"batch", "ops"}}, asked: wire.Priority{Level: 1, FairnessWeight: 9}, want: wire.Priority{Level: 1, FairnessWeight: 8}},
		{name: "a grant worse than the default applies to unset", give: toolcore.Principal{Subject: "erin", Groups: []string{"batch"}}, want: wire.Priority{Level: 5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.asked.FairnessKey = "someone-else"
			tt.want.FairnessKey = tgclient.PrincipalFairnessKey(tt.give)
			assert.Equal(t, tt.want, g.Clamp(tt.give, tt.asked))
		})
	}
}

// Per-principal caps (issue 32 item 4): principal A opens sessions until refused (429 naming its
// cap of 4, not 503), standalone SSE streams until refused (429, cap 2) and holds requests in
// flight until refused (429, cap 3); C and D then open sessions until refused too, D beyond its
// share of the global cap (12) while places are left (429). B, who holds nothing, still makes a
// stateless tools/call, initializes and calls.
func TestMCPPrincipalCapsLeaveOthersServed(t *testing.T) {
	pt, tg, infos := newPrincipalTools(t)
	url, token := jwtServer(t, mcp.NewServer(tg, infos, mcp.Options{}), mcp.HTTPOptions{
		MaxSessions: 12, MaxSessionsPerPrincipal: 4, MaxStreamsPerPrincipal: 2, MaxCallsPerPrincipal: 3})
	a, b, c, d := token("a", nil), token("b", nil), token("c", nil), token("d", nil)

	const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
	// open initializes a session for token: its ID, or "" and the refusal's status and body.
	open := func(token string) (session string, status int, body string) {
		resp := bearerRequest(t, url, http.MethodPost, token, "", initialize)
		defer resp.Body.Close()
		out, err := io.ReadAll(resp.Body) // to its end: go-sdk closes a session whose initialize was not answered
		require.NoError(t, err)
		if resp.StatusCode != http.StatusOK {
			return "", resp.StatusCode, string(out)
		}
		session = resp.Header.Get("Mcp-Session-Id")
		require.NotEmpty(t, session)
		ack := bearerRequest(t, url, http.MethodPost, token, session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		require.NoError(t, ack.Body.Close())
		return session, resp.StatusCode, ""
	}
	// openUntilRefused opens sessions for token until one is refused.
	openUntilRefused := func(token string) (sessions []string, status int, body string) {
		for range 20 {
			session, status, body := open(token)
			if session == "" {
				return sessions, status, body
			}
			sessions = append(sessions, session)
		}
		t.Fatal("never refused")
		return nil, 0, ""
	}

	aSessions, status, body := openUntilRefused(a)
	assert.Len(t, aSessions, 4)
	assert.Equal(t, http.StatusTooManyRequests, status, body)
	assert.Contains(t, body, "4 live sessions, its cap")

	var streams int
	for _, session := range aSessions {
		resp := bearerRequest(t, url, http.MethodGet, a, session, "")
		t.Cleanup(func() { _ = resp.Body.Close() })
		if resp.StatusCode != http.StatusOK {
			out, _ := io.ReadAll(resp.Body)
			assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode, "%s", out)
			assert.Contains(t, string(out), "2 standalone SSE streams open, its cap")
			break
		}
		streams++
	}
	assert.Equal(t, 2, streams, "A's standalone streams until refused")

	// A's calls in flight: one runs held, two wait for the one-at-a-time tool.
	release := pt.hold("held")
	defer release()
	var inFlight sync.WaitGroup
	drain := func(r io.ReadCloser) {
		inFlight.Go(func() {
			_, _ = io.Copy(io.Discard, r)
			_ = r.Close()
		})
	}
	var primeID string
	superseded := make(chan struct{}) // closed when the first call's answer ends
	for i := range 3 {
		// Its answer's headers have arrived (the SSE stream opens with its priming event): it is
		// admitted, and in flight until the tool returns.
		resp := bearerRequest(t, url, http.MethodPost, a, aSessions[i],
			`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"single","arguments":{"tag":"held"}}}`)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		if i == 0 {
			lines := bufio.NewReader(resp.Body)
			for primeID == "" {
				line, err := lines.ReadString('\n')
				require.NoError(t, err)
				primeID, _ = strings.CutPrefix(strings.TrimSpace(line), "id: ")
				if primeID == strings.TrimSpace(line) {
					primeID = ""
				}
			}
			inFlight.Go(func() {
				defer close(superseded)
				_, _ = io.Copy(io.Discard, lines)
				_ = resp.Body.Close()
			})
			continue
		}
		drain(resp.Body)
	}
	refused := func() {
		t.Helper()
		resp := bearerRequest(t, url, http.MethodPost, a, aSessions[3], `{"jsonrpc":"2.0","id":6,"method":"ping"}`)
		out, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode, "A's fourth request in flight: %s", out)
		assert.Contains(t, string(out), "3 requests in flight, its cap")
	}
	refused()
	// A resumption of A's own held stream takes that request's place: let past the cap (the
	// request it supersedes ends), and counted in its turn. Its answer's headers come with the
	// first event after primeID: the call's result.
	inFlight.Go(func() {
		resumed := bearerRequest(t, url, http.MethodGet, a, aSessions[0], "", "Last-Event-ID", primeID)
		out, _ := io.ReadAll(resumed.Body)
		_ = resumed.Body.Close()
		assert.Equal(t, http.StatusOK, resumed.StatusCode, "%s", out)
		assert.Contains(t, string(out), `\"held\"`, "the resumption carries the call's result")
	})
	select {
	case <-superseded:
	case <-time.After(time.Minute):
		t.Fatal("the resumption did not supersede the request holding its stream")
	}
	refused()

	cSessions, status, body := openUntilRefused(c)
	assert.Len(t, cSessions, 4)
	assert.Equal(t, http.StatusTooManyRequests, status, body)
	dSessions, status, body := openUntilRefused(d)
	assert.Len(t, dSessions, 2, "with 10 of 12 live and D holding 2, D may open no more")
	assert.Equal(t, http.StatusTooManyRequests, status, body)
	assert.Contains(t, body, "this principal holds 2 of the 12 live sessions")

	// B holds nothing: served.
	resp, body := post2026(t, url, "tools/call", map[string]any{"name": "whoami", "arguments": map[string]any{}}, http.Header{"Authorization": {"Bearer " + b}})
	assert.Equal(t, http.StatusOK, resp.StatusCode, body)
	assert.Contains(t, body, `\"subject\":\"b\"`)
	session, status, body := open(b)
	require.Equal(t, http.StatusOK, status, body)
	bs := &rawSession{t: t, url: url, token: b, id: session, next: 10}
	var res sdk.CallToolResult
	require.NoError(t, json.Unmarshal(bs.call("tools/call", map[string]any{"name": "whoami", "arguments": map[string]any{}}), &res))
	assert.Contains(t, text(t, &res), `"subject":"b"`)

	release()
	inFlight.Wait()
}

// bearerRequest sends one request of a 2025-11-25 session (when session is set) with a bearer
// token and the header pairs, and returns its response, the body unread.
func bearerRequest(t *testing.T, url, method, token, session, body string, header ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	return resp
}

// The real `toolgate mcp --listen` with JWTs: --principal-groups-claim names the groups' claim,
// --principal-grant a group's grant and --max-sessions-per-principal the cap; a call runs for
// the token's principal, which `toolgate status` shows (authenticated by mcp), with its _meta
// clamped to the grant and the principal's own fairness key; a second session is refused 429.
// A malformed --principal-grant exits 2 before serving.
func TestMCPProcessPrincipalFlags(t *testing.T) {
	f := newFixture(t)
	s := newRSASigner(t, "")
	p := startMCPProcess(t, f, "--auth-jwt-key-file", jwtKeyFile(t, s), "--auth-resource", testResource,
		"--principal-groups-claim", "roles", "--principal-grant", "group:ops=priority:1", "--max-sessions-per-principal", "1")
	claims := validClaims()
	claims["roles"] = []any{"ops"}
	token := s.token(t, claims)
	alice := newRawSession(t, p.url, token)
	var res sdk.CallToolResult
	require.NoError(t, json.Unmarshal(alice.call("tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "hi"},
		"_meta": map[string]any{mcp.PriorityMeta: 1, mcp.FairnessWeightMeta: 5}}), &res))
	workflowID, _ := res.Meta[mcp.WorkflowIDMeta].(string)
	require.NotEmpty(t, workflowID)
	assert.Equal(t, map[string]any{"issuer": "https://id.example.test", "subject": "alice", "groups": []any{"ops"},
		"authenticatedBy": toolcore.AuthenticatedByMCP}, memoPrincipal(t, workflowID))
	desc, err := devtest.Client(t).DescribeWorkflowExecution(t.Context(), workflowID, "")
	require.NoError(t, err)
	key := tgclient.PrincipalFairnessKey(toolcore.Principal{Issuer: "https://id.example.test", Subject: "alice"})
	assert.True(t, proto.Equal(&commonpb.Priority{PriorityKey: 1, FairnessKey: key, FairnessWeight: 1}, desc.GetWorkflowExecutionInfo().GetPriority()),
		"%v", desc.GetWorkflowExecutionInfo().GetPriority())

	srv := devtest.Server(t)
	status := exec.Command(toolgateBinary(t), "status", "--address", srv.FrontendAddress(), "--namespace", srv.Namespace(), workflowID)
	status.Env = childEnv()
	out, err := status.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Regexp(t, `principal\s+alice \(https://id.example.test\), authenticated by mcp, groups ops`, string(out))

	resp := bearerRequest(t, p.url, http.MethodPost, token, "",
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode, "%s", body)
	assert.Contains(t, string(body), "1 live sessions, its cap")

	args := mcpCommand(t, f, "--listen", "127.0.0.1:0", "--principal-grant", "ops=priority:1")
	bad := exec.Command(args[0], args[1:]...)
	bad.Env = childEnv()
	out, err = bad.CombinedOutput()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "%s", out)
	assert.Equal(t, 2, exit.ExitCode(), "%s", out)
	assert.Contains(t, string(out), "--principal-grant")
}
