package reviewauth_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/hmac"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	updatepb "go.temporal.io/api/update/v1"
	"go.temporal.io/api/workflowservice/v1"
	sdkclient "go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/server/common/authorization"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/log"

	"github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/cmd/toolgate/internal/devserver"
	"github.com/toolgate/toolgate/cmd/toolgate/internal/reviewauth"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
	"github.com/toolgate/toolgate/worker"
)

// testTimeout bounds the waits on the in-process server (generous: two shared cores).
const testTimeout = 2 * time.Minute

// hmacKeys is a token key provider with one HS256 key, kid "test".
type hmacKeys []byte

func (k hmacKeys) HmacKey(_, kid string) ([]byte, error) {
	if kid != "test" {
		return nil, fmt.Errorf("unknown key %q", kid)
	}
	return k, nil
}
func (hmacKeys) EcdsaKey(string, string) (*ecdsa.PublicKey, error) {
	return nil, errors.New("no ECDSA keys")
}
func (hmacKeys) RsaKey(string, string) (*rsa.PublicKey, error) { return nil, errors.New("no RSA keys") }
func (hmacKeys) SupportedMethods() []string                    { return []string{"HS256"} }
func (hmacKeys) Close()                                        {}

// token signs an HS256 JWT for subject with key, as an identity provider would.
func token(t *testing.T, key []byte, subject string) string {
	t.Helper()
	enc := func(v any) string {
		b, err := json.Marshal(v)
		require.NoError(t, err)
		return base64.RawURLEncoding.EncodeToString(b)
	}
	signed := enc(map[string]string{"alg": "HS256", "kid": "test", "typ": "JWT"}) + "." +
		enc(map[string]any{"sub": subject, "exp": time.Now().Add(time.Hour).Unix(), "permissions": []string{"default:writer"}})
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(signed))
	return signed + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// dial returns a client of srv sending apiKey as its bearer token ("" for none).
func dial(t *testing.T, srv *devserver.Server, apiKey string) sdkclient.Client {
	t.Helper()
	opts := sdkclient.Options{
		HostPort:  srv.FrontendAddress(),
		Namespace: srv.Namespace(),
		Logger:    sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler)),
	}
	if apiKey != "" {
		opts.Credentials = sdkclient.NewAPIKeyStaticCredentials(apiKey)
		opts.ConnectionOptions.TLSDisabled = true // a loopback test server
	}
	c, err := sdkclient.Dial(opts)
	require.NoError(t, err)
	t.Cleanup(c.Close)
	return c
}

// TestDecisionBoundToAuthenticatedSubject: on the embedded server with the server's JWT claim
// mapper and the reviewauth authorizer, an approval-gated call waits; a decision naming another
// reviewer than the token's subject, one naming a group the claims do not carry and one without
// a token are refused (PermissionDenied, with the reason) and the call keeps waiting; the
// subject's own decision is accepted and the history's ApprovalRecord names the subject.
func TestDecisionBoundToAuthenticatedSubject(t *testing.T) {
	key := []byte("reviewauth-test-key-0123456789abcdef")
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	srv, err := devserver.Start(ctx, devserver.Options{
		ClaimMapper: authorization.NewDefaultJWTClaimMapper(hmacKeys(key), &config.Authorization{}, log.NewNoopLogger()),
		Authorizer:  reviewauth.New(nil),
	})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, srv.Stop()) })

	deploy, err := toolcore.Define(toolcore.Definition[map[string]any]{
		Name:        "deploy",
		Description: "Deploys; a reviewer approves every call.",
		Validate:    func(toolcore.Arguments) toolcore.Decision[map[string]any] { return toolcore.Accept(map[string]any{}) },
		Execute:     func(context.Context, map[string]any) (any, error) { return map[string]bool{"deployed": true}, nil },
		Options:     toolcore.Options{RequireApproval: true},
	})
	require.NoError(t, err)
	reg, err := toolcore.NewRegistry(deploy)
	require.NoError(t, err)
	anonymous := dial(t, srv, "") // the worker and the agent: no token needed outside decisions
	const queue = "reviewauth"
	w, err := worker.New(anonymous, srv.Namespace(), reg, worker.Options{TaskQueue: queue})
	require.NoError(t, err)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	clientOpts := client.Options{TaskQueue: queue, Scope: queue, Namespace: srv.Namespace()}
	agent := client.New(anonymous, clientOpts)
	alice := client.New(dial(t, srv, token(t, key, "alice")), clientOpts)

	call, err := toolcore.NewToolCall("reviewauth-1", "deploy", []byte(`{}`))
	require.NoError(t, err)
	_, err = agent.Start(ctx, call)
	require.NoError(t, err)
	var state wire.ApprovalState
	require.Eventually(t, func() bool {
		state, err = agent.Approval(ctx, call.ID())
		return err == nil && state.Waiting
	}, testTimeout, 50*time.Millisecond, "the call waits for approval: %v", err)

	refused := func(who *client.Client, approve bool, d wire.ApprovalDecision, reason string) {
		t.Helper()
		d.CallHash = state.CallHash
		_, err := who.Decide(ctx, call.ID(), approve, d)
		var denied *serviceerror.PermissionDenied
		require.True(t, errors.As(err, &denied), "PermissionDenied, got %v", err)
		assert.Contains(t, denied.Reason, reason)
		st, err := agent.Approval(ctx, call.ID())
		require.NoError(t, err)
		assert.True(t, st.Waiting, "the call keeps waiting")
	}
	refused(alice, true, wire.ApprovalDecision{Reviewer: "security-officer@corp"},
		`names reviewer "security-officer@corp", the caller is authenticated as "alice"`)
	refused(alice, false, wire.ApprovalDecision{Reviewer: "bob", Reason: "no"}, `names reviewer "bob"`)
	refused(alice, true, wire.ApprovalDecision{Reviewer: "alice", Groups: []string{"payments-oncall"}},
		`group "payments-oncall"`)
	refused(agent, true, wire.ApprovalDecision{Reviewer: "alice"}, "not authenticated")

	rec, err := alice.Decide(ctx, call.ID(), true, wire.ApprovalDecision{CallHash: state.CallHash, Reviewer: "alice"})
	require.NoError(t, err)
	assert.Equal(t, "alice", rec.Reviewer)
	res, err := agent.Result(ctx, call.ID())
	require.NoError(t, err)
	require.False(t, res.IsError(), res.Content())

	hist, err := agent.History(ctx, agent.WorkflowID(call.ID()), "")
	require.NoError(t, err)
	var records []wire.ApprovalRecord
	for _, ev := range hist.GetEvents() {
		if ev.GetEventType() != enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED {
			continue
		}
		ps := ev.GetWorkflowExecutionUpdateCompletedEventAttributes().GetOutcome().GetSuccess().GetPayloads()
		require.Len(t, ps, 1)
		var r wire.ApprovalRecord
		require.NoError(t, json.Unmarshal(ps[0].GetData(), &r))
		records = append(records, r)
	}
	require.Len(t, records, 1, "one decision in history")
	assert.Equal(t, wire.DecisionApproved, records[0].Decision)
	assert.Equal(t, "alice", records[0].Reviewer, "the recorded reviewer is the authenticated subject")
}

// vouched are claim extensions that vouch for groups.
type vouched []string

func (v vouched) ReviewerGroups() []string { return v }

// denyAll denies everything.
type denyAll struct{}

func (denyAll) Authorize(context.Context, *authorization.Claims, *authorization.CallTarget) (authorization.Result, error) {
	return authorization.Result{Decision: authorization.DecisionDeny, Reason: "next says no"}, nil
}

// TestAuthorizer: groups a claim mapper vouches for (GroupClaims) admit a decision naming them;
// the wrapped authorizer decides first, and alone for other requests.
func TestAuthorizer(t *testing.T) {
	approve := func(data string) *authorization.CallTarget {
		req := &workflowservice.UpdateWorkflowExecutionRequest{Request: &updatepb.Request{Input: &updatepb.Input{
			Name: wire.UpdateApprove,
			Args: &commonpb.Payloads{Payloads: []*commonpb.Payload{{Metadata: map[string][]byte{"encoding": []byte("json/plain")}, Data: []byte(data)}}},
		}}}
		return &authorization.CallTarget{APIName: "/temporal.api.workflowservice.v1.WorkflowService/UpdateWorkflowExecution", Namespace: "default", Request: req}
	}
	ctx := context.Background()
	alice := &authorization.Claims{Subject: "alice", Extensions: vouched{"payments-oncall"}}
	decide := func(a *reviewauth.Authorizer, claims *authorization.Claims, target *authorization.CallTarget) authorization.Result {
		res, err := a.Authorize(ctx, claims, target)
		require.NoError(t, err)
		return res
	}
	a := reviewauth.New(nil)
	assert.Equal(t, authorization.DecisionAllow, decide(a, alice, approve(`{"reviewer":"alice","groups":["payments-oncall"]}`)).Decision)
	res := decide(a, alice, approve(`{"reviewer":"alice","groups":["admins"]}`))
	assert.Equal(t, authorization.DecisionDeny, res.Decision)
	assert.Contains(t, res.Reason, `group "admins"`)
	other := &authorization.CallTarget{Request: &workflowservice.StartWorkflowExecutionRequest{}}
	assert.Equal(t, authorization.DecisionAllow, decide(a, nil, other).Decision)

	strict := reviewauth.New(denyAll{})
	assert.Equal(t, "next says no", decide(strict, alice, approve(`{"reviewer":"alice"}`)).Reason)
	assert.Equal(t, "next says no", decide(strict, alice, other).Reason)
}

// TestStartPrincipalBoundToAuthenticatedSubject: on the embedded server with the server's JWT
// claim mapper and the reviewauth authorizer, a Go client with alice's token starts a call for
// {subject alice, authenticatedBy frontend}: it runs, and the tool, Status and the history's
// start memo show that principal. The same client claiming bob, or claiming a principal toolgate
// mcp authenticated without the delegation permission, is refused (PermissionDenied with the
// reason) and nothing runs; the delegating subject's "mcp" start runs; an unmarked principal
// runs and shows as asserted.
func TestStartPrincipalBoundToAuthenticatedSubject(t *testing.T) {
	key := []byte("reviewauth-test-key-0123456789abcdef")
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	srv, err := devserver.Start(ctx, devserver.Options{
		ClaimMapper: authorization.NewDefaultJWTClaimMapper(hmacKeys(key), &config.Authorization{}, log.NewNoopLogger()),
		Authorizer:  &reviewauth.Authorizer{Delegates: []string{"toolgate-mcp"}},
	})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, srv.Stop()) })

	seen := make(chan toolcore.Principal, 4)
	whoami, err := toolcore.Define(toolcore.Definition[map[string]any]{
		Name:        "whoami",
		Description: "Says whom it runs for.",
		Validate:    func(toolcore.Arguments) toolcore.Decision[map[string]any] { return toolcore.Accept(map[string]any{}) },
		Execute: func(ctx context.Context, _ map[string]any) (any, error) {
			p, ok := toolcore.CallPrincipal(ctx)
			if !ok {
				return nil, errors.New("no principal")
			}
			seen <- p
			return map[string]string{"subject": p.Subject}, nil
		},
		Options: toolcore.Options{SideEffect: toolcore.ReadOnly},
	})
	require.NoError(t, err)
	reg, err := toolcore.NewRegistry(whoami)
	require.NoError(t, err)
	anonymous := dial(t, srv, "")
	const queue = "reviewauth-principal"
	w, err := worker.New(anonymous, srv.Namespace(), reg, worker.Options{TaskQueue: queue})
	require.NoError(t, err)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	clientOpts := client.Options{TaskQueue: queue, Scope: queue, Namespace: srv.Namespace()}
	reader := client.New(anonymous, clientOpts)
	alice := client.New(dial(t, srv, token(t, key, "alice")), clientOpts)
	mcpServer := client.New(dial(t, srv, token(t, key, "toolgate-mcp")), clientOpts)

	runs := func(who *client.Client, id string, p toolcore.Principal) {
		t.Helper()
		call, err := toolcore.NewToolCall(id, "whoami", []byte(`{}`))
		require.NoError(t, err)
		res, err := who.Execute(client.WithPrincipal(ctx, p), call)
		require.NoError(t, err)
		require.False(t, res.IsError(), res.Content())
		select {
		case got := <-seen:
			assert.Equal(t, p, got, "the tool sees the principal")
		default:
			t.Fatal("the tool did not run")
		}
		st, err := reader.Status(ctx, id)
		require.NoError(t, err)
		if assert.NotNil(t, st.Principal, "status shows the principal") {
			assert.Equal(t, p, *st.Principal)
		}
		hist, err := reader.History(ctx, reader.WorkflowID(id), "")
		require.NoError(t, err)
		started := hist.GetEvents()[0].GetWorkflowExecutionStartedEventAttributes()
		var recorded toolcore.Principal
		require.NoError(t, json.Unmarshal(started.GetMemo().GetFields()[wire.MemoPrincipal].GetData(), &recorded))
		assert.Equal(t, p, recorded, "the history's start records the principal")
	}
	refused := func(who *client.Client, id string, p toolcore.Principal, reason string) {
		t.Helper()
		call, err := toolcore.NewToolCall(id, "whoami", []byte(`{}`))
		require.NoError(t, err)
		_, err = who.Start(client.WithPrincipal(ctx, p), call)
		var denied *serviceerror.PermissionDenied
		require.True(t, errors.As(err, &denied), "PermissionDenied, got %v", err)
		assert.Contains(t, denied.Reason, reason)
		_, err = reader.Status(ctx, id)
		assert.Error(t, err, "no call was started")
	}

	aliceFrontend := toolcore.Principal{Subject: "alice", Name: "Alice", AuthenticatedBy: toolcore.AuthenticatedByFrontend}
	runs(alice, "principal-1", aliceFrontend)
	refused(alice, "principal-2", toolcore.Principal{Subject: "bob", AuthenticatedBy: toolcore.AuthenticatedByFrontend},
		`names subject "bob" and is marked authenticatedBy "frontend", the caller is authenticated as "alice"`)
	refused(alice, "principal-3", toolcore.Principal{Issuer: "https://idp.example", Subject: "alice", AuthenticatedBy: toolcore.AuthenticatedByMCP},
		`the caller "alice" may not delegate`)
	refused(alice, "principal-4", toolcore.Principal{Issuer: "https://idp.example", Subject: "alice", AuthenticatedBy: toolcore.AuthenticatedByFrontend},
		`names issuer "https://idp.example"`)
	refused(reader, "principal-5", aliceFrontend, "not authenticated")
	runs(mcpServer, "principal-6", toolcore.Principal{Issuer: "https://idp.example", Subject: "bob", AuthenticatedBy: toolcore.AuthenticatedByMCP})

	asserted := toolcore.Principal{Subject: "carol"}
	runs(alice, "principal-7", asserted)
	st, err := reader.Status(ctx, "principal-7")
	require.NoError(t, err)
	require.NotNil(t, st.Principal)
	assert.False(t, st.Principal.Authenticated())
	assert.Contains(t, st.Principal.String(), "asserted")
}

// vouching are claim extensions that vouch for an issuer, a tenant and delegation.
type vouching struct {
	issuer, tenant string
	delegates      bool
}

func (v vouching) Issuer() string  { return v.issuer }
func (v vouching) Tenant() string  { return v.tenant }
func (v vouching) Delegates() bool { return v.delegates }

// TestAuthorizerIdentity: what the claims vouch for reaches the checks: an issuer (the claims'
// IssuerClaims over Authorizer.Issuer), a tenant, delegation (DelegationClaims, or a subject in
// Authorizer.Delegates), and the system admin role.
func TestAuthorizerIdentity(t *testing.T) {
	start := func(principal string) *authorization.CallTarget {
		return &authorization.CallTarget{Request: &workflowservice.StartWorkflowExecutionRequest{
			WorkflowType: &commonpb.WorkflowType{Name: "ToolCallWorkflow"},
			Memo: &commonpb.Memo{Fields: map[string]*commonpb.Payload{wire.MemoPrincipal: {
				Metadata: map[string][]byte{"encoding": []byte("json/plain")}, Data: []byte(principal)}}},
		}}
	}
	approve := func(data string) *authorization.CallTarget {
		return &authorization.CallTarget{Request: &workflowservice.UpdateWorkflowExecutionRequest{Request: &updatepb.Request{Input: &updatepb.Input{
			Name: wire.UpdateApprove,
			Args: &commonpb.Payloads{Payloads: []*commonpb.Payload{{Metadata: map[string][]byte{"encoding": []byte("json/plain")}, Data: []byte(data)}}},
		}}}}
	}
	configured := &reviewauth.Authorizer{Issuer: "https://idp.example", Delegates: []string{"toolgate-mcp"}}
	tests := []struct {
		name   string
		a      *reviewauth.Authorizer
		claims *authorization.Claims
		target *authorization.CallTarget
		deny   string // "" allows
	}{
		{"the configured issuer", configured, &authorization.Claims{Subject: "alice"},
			start(`{"issuer":"https://idp.example","subject":"alice","authenticatedBy":"frontend"}`), ""},
		{"no issuer where one is configured", configured, &authorization.Claims{Subject: "alice"},
			start(`{"subject":"alice","authenticatedBy":"frontend"}`), `vouch for issuer "https://idp.example"`},
		{"the claims' issuer wins", configured, &authorization.Claims{Subject: "alice", Extensions: vouching{issuer: "https://other.example"}},
			start(`{"issuer":"https://idp.example","subject":"alice","authenticatedBy":"frontend"}`), `vouch for issuer "https://other.example"`},
		{"a vouched tenant", reviewauth.New(nil), &authorization.Claims{Subject: "alice", Extensions: vouching{tenant: "acme"}},
			start(`{"subject":"alice","tenant":"acme","authenticatedBy":"frontend"}`), ""},
		{"another tenant", reviewauth.New(nil), &authorization.Claims{Subject: "alice", Extensions: vouching{tenant: "acme"}},
			start(`{"subject":"alice","tenant":"globex","authenticatedBy":"frontend"}`), `tenant "globex"`},
		{"a delegating subject", configured, &authorization.Claims{Subject: "toolgate-mcp"},
			start(`{"subject":"bob","authenticatedBy":"mcp"}`), ""},
		{"delegating claims", reviewauth.New(nil), &authorization.Claims{Subject: "svc", Extensions: vouching{delegates: true}},
			start(`{"subject":"bob","authenticatedBy":"mcp"}`), ""},
		{"no delegation", configured, &authorization.Claims{Subject: "alice"},
			start(`{"subject":"bob","authenticatedBy":"mcp"}`), "may not delegate"},
		{"the system admin", reviewauth.New(nil), &authorization.Claims{Subject: "temporal-system", System: authorization.RoleAdmin},
			start(`{"subject":"bob","authenticatedBy":"frontend"}`), ""},
		{"a decision of the configured issuer", configured, &authorization.Claims{Subject: "alice"},
			approve(`{"reviewer":"alice","issuer":"https://idp.example"}`), ""},
		{"a decision of another issuer", configured, &authorization.Claims{Subject: "alice"},
			approve(`{"reviewer":"alice","issuer":"https://evil.example"}`), `names issuer "https://evil.example"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := tt.a.Authorize(context.Background(), tt.claims, tt.target)
			require.NoError(t, err)
			if tt.deny == "" {
				assert.Equal(t, authorization.DecisionAllow, res.Decision, res.Reason)
				return
			}
			assert.Equal(t, authorization.DecisionDeny, res.Decision)
			assert.Contains(t, res.Reason, tt.deny)
		})
	}
}
