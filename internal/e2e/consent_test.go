package e2e

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/internal/consenttest"
	"github.com/toolgate/toolgate/internal/devtest"
	"github.com/toolgate/toolgate/internal/fixtures"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
	"github.com/toolgate/toolgate/worker"
)

// A call waiting for its principal's consent is seen by the Go client (issue 33 item 3):
// Options.OnConsent hears the request once, with its authorization URL, while Execute waits;
// Status carries it (wire.ConsentState), says the call waits with an unknown request when no
// worker answers the query, and carries nothing once the consent came and the call completed.
// The call's workflow is consenttest's stand-in, which shows the wait on the wire as the real one.
func TestConsentWaitSeenByStatusAndHook(t *testing.T) {
	sdk := devtest.Client(t)
	queue := devtest.TaskQueue(t)
	stop, err := consenttest.Start(sdk, queue)
	require.NoError(t, err)
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			stop()
		}
	})

	var mu sync.Mutex
	var heard []client.ConsentEvent
	first := make(chan struct{})
	cl := client.New(sdk, client.Options{
		TaskQueue:       queue,
		Namespace:       devtest.Server(t).Namespace(),
		ConsentInterval: 20 * time.Millisecond,
		OnConsent: func(ev client.ConsentEvent) {
			mu.Lock()
			defer mu.Unlock()
			heard = append(heard, ev)
			if len(heard) == 1 {
				close(first)
			}
		},
	})
	call, err := toolcore.NewToolCall("consent-1", "read_repo", []byte(`{}`))
	require.NoError(t, err)
	type outcome struct {
		res toolcore.Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := cl.Execute(t.Context(), call)
		done <- outcome{res, err}
	}()

	select {
	case <-first:
	case o := <-done:
		t.Fatalf("Execute returned before the consent was asked: %v %v", o.res, o.err)
	case <-time.After(time.Minute):
		t.Fatal("OnConsent was not called within a minute")
	}
	mu.Lock()
	ev := heard[0]
	mu.Unlock()
	assert.Equal(t, cl.WorkflowID("consent-1"), ev.WorkflowID)
	assert.Equal(t, "consent-1", ev.ToolCallID)
	assert.Equal(t, "read_repo", ev.ToolName)
	assert.Equal(t, consenttest.Request.URL, ev.Request.URL)
	assert.Equal(t, consenttest.Request.Provider, ev.Request.Provider)
	assert.Equal(t, consenttest.Request.Scopes, ev.Request.Scopes)
	assert.False(t, ev.Since.IsZero())
	assert.Equal(t, ev.Since.Add(consenttest.Wait), ev.Deadline)

	st, err := cl.Status(t.Context(), "consent-1")
	require.NoError(t, err)
	require.NotNil(t, st.Consent, "Status of a call waiting for consent")
	assert.True(t, st.Consent.Waiting)
	assert.Equal(t, ev.Request, st.Consent.Request)
	direct, err := cl.Consent(t.Context(), "consent-1")
	require.NoError(t, err)
	assert.Equal(t, *st.Consent, direct)

	// No worker answers the query: the wait shows, its request does not.
	stop()
	stopped = true
	st, err = cl.Status(t.Context(), "consent-1")
	require.NoError(t, err)
	require.NotNil(t, st.Consent)
	assert.True(t, st.Consent.Waiting)
	assert.Empty(t, st.Consent.Request.URL)

	stop, err = consenttest.Start(sdk, queue)
	require.NoError(t, err)
	stopped = false
	require.NoError(t, sdk.SignalWorkflow(t.Context(), cl.WorkflowID("consent-1"), "", wire.SignalConsent,
		wire.ConsentSignal{Provider: consenttest.Request.Provider}))
	var o outcome
	select {
	case o = <-done:
	case <-time.After(time.Minute):
		t.Fatal("Execute did not return within a minute of the consent")
	}
	require.NoError(t, o.err)
	assert.Equal(t, consenttest.Content, o.res.Content())
	mu.Lock()
	assert.Len(t, heard, 1, "one request, heard once however often it was read")
	mu.Unlock()

	st, err = cl.Status(context.WithoutCancel(t.Context()), "consent-1")
	require.NoError(t, err)
	assert.Equal(t, client.Completed, st.State)
	assert.Nil(t, st.Consent)
	waiting, err := cl.Consent(t.Context(), "consent-1")
	require.NoError(t, err)
	assert.False(t, waiting.Waiting)
}

// The same through the real ToolCallWorkflow: a tool that needs its principal's token waits for
// consent after its first attempt found none; OnConsent hears the worker's authorization URL
// once, Status carries it, and after the grant and the consent signal the tool runs.
func TestConsentWaitOfRealCallSeenByStatusAndHook(t *testing.T) {
	source := &fixtures.ConsentSource{}
	var tool toolcore.Tool
	for _, tl := range fixtures.Tools() {
		if tl.Name() == fixtures.Consent {
			tool = tl
		}
	}
	require.False(t, tool.IsZero(), "fixtures.Consent")
	reg, err := toolcore.NewRegistry(tool)
	require.NoError(t, err)
	sdk := devtest.Client(t)
	queue := devtest.TaskQueue(t)
	w, err := worker.New(sdk, devtest.Server(t).Namespace(), reg, worker.Options{TaskQueue: queue, Credentials: source})
	require.NoError(t, err)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)

	heard := make(chan client.ConsentEvent, 4)
	cl := client.New(sdk, client.Options{TaskQueue: queue, Namespace: devtest.Server(t).Namespace(),
		ConsentInterval: 20 * time.Millisecond, OnConsent: func(ev client.ConsentEvent) { heard <- ev }})
	alice := toolcore.Principal{Issuer: "https://idp.example", Subject: "alice"}
	call, err := toolcore.NewToolCall("consent-real", fixtures.Consent, []byte(`{}`))
	require.NoError(t, err)
	done := make(chan error, 1)
	var res toolcore.Result
	go func() {
		var err error
		res, err = cl.Execute(client.WithPrincipal(t.Context(), alice), call)
		done <- err
	}()
	var ev client.ConsentEvent
	select {
	case ev = <-heard:
	case err := <-done:
		t.Fatalf("Execute returned before the consent was asked: %v", err)
	case <-time.After(time.Minute):
		t.Fatal("OnConsent was not called within a minute")
	}
	assert.Equal(t, fixtures.ConsentProvider, ev.Request.Provider)
	assert.Equal(t, []string{"read"}, ev.Request.Scopes)
	assert.Equal(t, "https://idp.example/authorize?client_id=toolgate&state=recorded", ev.Request.URL)
	st, err := cl.Status(t.Context(), "consent-real")
	require.NoError(t, err)
	require.NotNil(t, st.Consent)
	assert.Equal(t, ev.Request, st.Consent.Request)

	source.Grant(alice.Key())
	require.NoError(t, sdk.SignalWorkflow(t.Context(), cl.WorkflowID("consent-real"), "", wire.SignalConsent,
		wire.ConsentSignal{Provider: fixtures.ConsentProvider}))
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(time.Minute):
		t.Fatal("Execute did not return within a minute of the consent")
	}
	assert.False(t, res.IsError(), res.Content())
	assert.Empty(t, heard, "one request, heard once")
	st, err = cl.Status(t.Context(), "consent-real")
	require.NoError(t, err)
	assert.Nil(t, st.Consent)
}
