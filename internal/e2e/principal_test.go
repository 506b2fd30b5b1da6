package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/workflowservice/v1"
	sdkclient "go.temporal.io/sdk/client"

	"github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/codec"
	"github.com/toolgate/toolgate/internal/devtest"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// whoamiTool returns the principal its call runs for, as toolcore.CallPrincipal gives it.
func whoamiTool(t *testing.T) toolcore.Tool {
	return define(t, "whoami", toolcore.Options{SideEffect: toolcore.ReadOnly}, func(ctx context.Context, _ args) (any, error) {
		p, ok := toolcore.CallPrincipal(ctx)
		if !ok {
			return "none", nil
		}
		return p, nil
	})
}

// TestPrincipalEndToEnd: on the real server, a Go client's principal (asserted) is in the call's
// start memo, reaches the tool, is shown by Status, and is found by a ToolSubject query; an agent
// run's child calls run for the run's principal with the run as the actor.
func TestPrincipalEndToEnd(t *testing.T) {
	e := newEnv(t, whoamiTool(t))
	queue := e.startParentWorker()
	ctx := e.ctx()
	subject := "alice-" + e.queue // unique on the shared server, for the visibility query
	alice := toolcore.Principal{Issuer: "https://idp.example", Subject: subject, Tenant: "acme", Groups: []string{"guests"}}

	res, err := e.client.Execute(client.WithPrincipal(ctx, alice), call(t, "p-1", "whoami", `{}`))
	require.NoError(t, err)
	assert.JSONEq(t, fmt.Sprintf(`{"issuer":"https://idp.example","subject":%q,"tenant":"acme","groups":["guests"]}`, subject), res.Content(),
		"the tool reads the asserted principal (no authenticatedBy)")

	st, err := e.client.Status(ctx, "p-1")
	require.NoError(t, err)
	require.NotNil(t, st.Principal)
	assert.Equal(t, alice, *st.Principal)
	assert.Equal(t, client.PrincipalFairnessKey(alice), st.Priority.FairnessKey, "the principal is the call's fairness key")

	hist := rawHistory(ctx, t, e.sdk, e.client.WorkflowID("p-1"))
	memo := hist.Events[0].GetWorkflowExecutionStartedEventAttributes().GetMemo().GetFields()[wire.MemoPrincipal]
	require.NotNil(t, memo, "the principal is in the call's history")
	assert.Contains(t, string(memo.GetData()), subject)

	// ToolSubject finds the call (visibility is eventually consistent: poll within the test's ctx).
	query := fmt.Sprintf("%s = %s", wire.SearchAttributeToolSubject, wire.QueryString(subject))
	require.Eventually(t, func() bool {
		resp, err := e.sdk.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: devtest.Server(t).Namespace(), Query: query})
		return err == nil && len(resp.GetExecutions()) == 1
	}, testTimeout, 50*time.Millisecond)

	// A call without a principal runs for none.
	res, err = e.client.Execute(ctx, call(t, "p-2", "whoami", `{}`))
	require.NoError(t, err)
	assert.Equal(t, `"none"`, res.Content())

	// An agent run started for bob: its child calls act for bob, the run is the actor.
	bob := toolcore.Principal{Subject: "bob", AuthenticatedBy: toolcore.AuthenticatedByFrontend}
	raw, err := call(t, "p-3", "whoami", `{}`).MarshalJSON()
	require.NoError(t, err)
	agentID := e.queue + "/agent-bob"
	run, err := e.sdk.ExecuteWorkflow(ctx, sdkclient.StartWorkflowOptions{ID: agentID, TaskQueue: queue,
		Memo: map[string]any{wire.MemoPrincipal: bob}}, "roundParent", e.queue, e.queue, []json.RawMessage{raw})
	require.NoError(t, err)
	var out []parentOutcome
	require.NoError(t, run.Get(ctx, &out))
	require.Len(t, out, 1)
	require.Empty(t, out[0].Error)
	assert.JSONEq(t, fmt.Sprintf(`{"subject":"bob","authenticatedBy":"frontend","actor":{"issuer":%q,"subject":%q,"name":"roundParent"}}`,
		toolcore.ActorIssuerAgent, agentID), out[0].Content)
	st, err = e.client.Status(ctx, "p-3")
	require.NoError(t, err)
	require.NotNil(t, st.Principal)
	assert.Equal(t, "bob", st.Principal.Subject)
}

// TestEncryptedPrincipal: with a payload codec the principal memo is encrypted in history, and a
// worker given the client's data converter still reads it.
func TestEncryptedPrincipal(t *testing.T) {
	const canary = "principal-canary-51c9"
	keys, err := codec.NewKeyring(codec.Key{ID: "k1", Secret: bytes.Repeat([]byte{7}, codec.KeySize)})
	require.NoError(t, err)
	queue := devtest.TaskQueue(t)
	_, tg, _ := encryptedEnv(t, queue, keys, whoamiTool(t))
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()

	res, err := tg.Execute(client.WithPrincipal(ctx, toolcore.Principal{Subject: canary}), call(t, "ep-1", "whoami", `{}`))
	require.NoError(t, err)
	assert.JSONEq(t, `{"subject":"`+canary+`"}`, res.Content())
	hist := rawHistory(ctx, t, devtest.Client(t), tg.WorkflowID("ep-1"))
	memo := hist.Events[0].GetWorkflowExecutionStartedEventAttributes().GetMemo().GetFields()[wire.MemoPrincipal]
	require.NotNil(t, memo)
	assert.Equal(t, codec.EncodingEncrypted, string(memo.GetMetadata()[codec.MetadataEncoding]))
	assert.NotContains(t, string(memo.GetData()), canary)
}
