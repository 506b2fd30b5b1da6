package workflows_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/toolgate/toolgate/activities"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
	"github.com/toolgate/toolgate/workflows"
)

// consentSource hands out each principal's token once it has consented; before, it asks for
// consent. It records what it was asked.
type consentSource struct {
	mu        sync.Mutex
	consented map[string]bool
	waiters   []string
}

func (s *consentSource) consent(principal string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.consented == nil {
		s.consented = map[string]bool{}
	}
	s.consented[principal] = true
}

func (s *consentSource) AccessToken(_ context.Context, req toolcore.CredentialRequest) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.waiters = append(s.waiters, req.Waiter)
	if !s.consented[req.Principal.Key()] {
		return "", &toolcore.ConsentRequiredError{Provider: req.Credential.Provider, Scopes: []string{"read"},
			URL: "https://idp.example/authorize?state=s1&x=<b>`y`</b>", Expires: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	}
	return "token-of-" + req.Principal.Subject + "-0123456789", nil
}

// idpTool is an Unsafe tool that needs the caller's token at provider "idp" and returns it: the
// result shows it redacted.
func idpTool(runs *atomic.Int64) toolcore.Tool {
	return running("idp_whoami", toolcore.Options{Credentials: []toolcore.Credential{{Provider: "idp", Scopes: []string{"read"}}}, ConsentTimeout: time.Hour},
		func(ctx context.Context) (any, error) {
			runs.Add(1)
			token, err := toolcore.AccessToken(ctx, "idp")
			if err != nil {
				return nil, err
			}
			return map[string]string{"token": token}, nil
		})
}

// consentRun runs the idp tool's call for alice; during the wait (after a minute of workflow
// time) act runs with the environment and the source.
func consentRun(t *testing.T, src *consentSource, act func(env *testsuite.TestWorkflowEnvironment)) (toolcore.Result, int64, error) {
	t.Helper()
	var runs atomic.Int64
	reg, err := toolcore.NewRegistry(idpTool(&runs))
	require.NoError(t, err)
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	env.SetTestTimeout(time.Minute)
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: "toolcall-consent", TaskQueue: wire.DefaultTaskQueue})
	require.NoError(t, env.SetMemoOnStart(map[string]any{wire.MemoPrincipal: toolcore.Principal{Issuer: "https://idp.example", Subject: "alice"}}))
	(&workflows.Workflows{Registry: reg}).Register(env)
	(&activities.Activities{Registry: reg, Credentials: src}).Register(env)
	if act != nil {
		env.RegisterDelayedCallback(func() { act(env) }, time.Minute)
	}
	env.ExecuteWorkflow(wire.ToolCallWorkflowName, call("c-consent", "idp_whoami", `{}`))
	require.True(t, env.IsWorkflowCompleted())
	var res toolcore.Result
	err = env.GetWorkflowError()
	if err == nil {
		require.NoError(t, env.GetWorkflowResult(&res))
	}
	return res, runs.Load(), err
}

func TestConsentWaitThenRun(t *testing.T) {
	src := &consentSource{}
	var state wire.ConsentState
	res, runs, err := consentRun(t, src, func(env *testsuite.TestWorkflowEnvironment) {
		v, err := env.QueryWorkflow(wire.QueryConsent)
		require.NoError(t, err)
		require.NoError(t, v.Get(&state))
		src.consent("https://idp.example alice")
		env.SignalWorkflow(wire.SignalConsent, wire.ConsentSignal{Provider: "idp"})
	})
	require.NoError(t, err)
	assert.Equal(t, int64(1), runs, "the tool runs once, after the consent")
	assert.True(t, state.Waiting)
	assert.Equal(t, "idp", state.Request.Provider)
	assert.Contains(t, state.Request.URL, "https://idp.example/authorize?state=s1")
	assert.Equal(t, time.Hour, state.Deadline.Sub(state.Since))
	assert.Equal(t, `{"token":"[REDACTED:oauth:idp]"}`, res.Content(), "the token never reaches the result")
	assert.Equal(t, []string{"toolcall-consent", "toolcall-consent"}, src.waiters, "the waiter is the call's workflow")
}

func TestConsentRefusedOrExpiredEndsTheCallWithoutRunning(t *testing.T) {
	res, runs, err := consentRun(t, &consentSource{}, func(env *testsuite.TestWorkflowEnvironment) {
		env.SignalWorkflow(wire.SignalConsent, wire.ConsentSignal{Provider: "idp", Refused: "access_denied"})
	})
	require.NoError(t, err)
	assert.Zero(t, runs)
	assert.Equal(t, toolcore.CodeToolExecutionFailed, res.ErrorCode())
	assert.Contains(t, res.ErrorMessage(), "refused consent to idp (access_denied)")

	res, runs, err = consentRun(t, &consentSource{}, nil)
	require.NoError(t, err)
	assert.Zero(t, runs)
	assert.Contains(t, res.ErrorMessage(), "did not consent to idp within 1h0m0s")
}

func TestConsentSpuriousSignalsAreBounded(t *testing.T) {
	res, runs, err := consentRun(t, &consentSource{}, func(env *testsuite.TestWorkflowEnvironment) {
		for range workflows.MaxConsentRounds + 2 {
			env.SignalWorkflow(wire.SignalConsent, wire.ConsentSignal{Provider: "other"})
		}
	})
	require.NoError(t, err)
	assert.Zero(t, runs)
	assert.Contains(t, res.ErrorMessage(), "no token for idp after 8 consent waits")
}

func TestConsentCanceledWhileWaiting(t *testing.T) {
	_, runs, err := consentRun(t, &consentSource{}, func(env *testsuite.TestWorkflowEnvironment) { env.CancelWorkflow() })
	var canceled *temporal.CanceledError
	require.ErrorAs(t, err, &canceled)
	assert.Zero(t, runs)
}

func TestCredentialWithoutPrincipalFailsWithoutRunning(t *testing.T) {
	var runs atomic.Int64
	reg, err := toolcore.NewRegistry(idpTool(&runs))
	require.NoError(t, err)
	r := runWorkflow(t, reg, call("c-np", "idp_whoami", `{}`), runOptions{})
	require.NoError(t, r.err)
	assert.Zero(t, runs.Load())
	assert.Contains(t, r.result.ErrorMessage(), `secret "oauth:idp" is not available: the worker has no OAuth providers configured`)
}
