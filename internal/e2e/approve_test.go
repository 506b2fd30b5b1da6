package e2e

import (
	"context"
	"encoding/base64"
	"os/exec"
	"os/user"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/converter"

	"github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/internal/devtest"
	"github.com/toolgate/toolgate/internal/testbin"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// TestApproveWithoutUSER: `toolgate approve` without --reviewer and without $USER or $LOGNAME
// (as under systemd, cron or a container) decides as the identity it knows: the subject of the
// connection's bearer token when it is a JWT, else the OS account running it.
func TestApproveWithoutUSER(t *testing.T) {
	me, err := user.Current()
	require.NoError(t, err)
	require.NotEmpty(t, me.Username, "the test needs an OS account with a name")
	payload := base64.RawURLEncoding.EncodeToString([]byte(`{"sub":"alice@example.com","iss":"https://id.example.com"}`))
	jwt := "eyJhbGciOiJub25lIn0." + payload + ".c2ln"
	tests := []struct {
		name  string
		env   []string
		extra []string
		want  string
	}{
		{name: "the OS account", want: me.Username},
		{name: "the bearer token's subject", env: []string{"TEMPORAL_API_KEY=" + jwt}, extra: []string{"--tls=false"}, want: "alice@example.com"},
	}
	e := newEnv(t, define(t, "guarded", toolcore.Options{RequireApproval: true},
		func(context.Context, args) (any, error) { return "done", nil }))
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := "approve-" + e.queue + "-" + string(rune('a'+i))
			wid, err := e.client.Start(e.ctx(), call(t, id, "guarded", `{"left":1,"right":2}`))
			require.NoError(t, err)
			require.Eventually(t, func() bool {
				st, err := e.client.ApprovalByWorkflowID(e.ctx(), wid)
				return err == nil && st.Waiting
			}, testTimeout, 20*time.Millisecond, "the call waits for approval")

			out, err := toolgateWithoutUSER(t, tt.env, append([]string{"approve", wid, "--yes"}, tt.extra...)...)
			require.NoError(t, err, "toolgate approve without $USER: %s", out)
			assert.Contains(t, string(out), "approved by "+tt.want)

			res, err := e.client.ResultByWorkflowID(e.ctx(), wid)
			require.NoError(t, err)
			assert.False(t, res.IsError(), "the approved call ran: %s", res.Content())
		})
	}
}

// TestCallSaysItWaitsForApproval: `toolgate call` of a tool that needs approval, its stderr a
// pipe (not a terminal), prints one plain line saying the call waits and how to decide, then
// finishes once a reviewer approves.
func TestCallSaysItWaitsForApproval(t *testing.T) {
	e := newEnv(t, define(t, "guarded", toolcore.Options{RequireApproval: true},
		func(context.Context, args) (any, error) { return "done", nil }))
	id := "approve-call-" + e.queue
	wid := wire.WorkflowID("", id)
	c := startCLICall(t, "guarded", `{"left":1,"right":2}`, "--id", id, "--task-queue", e.queue)
	notice := c.waitLine(t, "the call waits for approval of guarded", "line about the approval wait")
	assert.Contains(t, notice, "toolgate approve "+wid)

	anyone := client.New(e.sdk, client.Options{TaskQueue: e.queue, Namespace: devtest.Server(t).Namespace()})
	st, err := anyone.ApprovalByWorkflowID(e.ctx(), wid)
	require.NoError(t, err)
	_, err = anyone.DecideByWorkflowID(e.ctx(), wid, true, wire.ApprovalDecision{CallHash: st.CallHash, Reviewer: "reviewer"})
	require.NoError(t, err)
	require.NoError(t, c.wait(), c.text())
	assert.Contains(t, c.stdout.String(), `"isError":false`)
	notices := 0
	for _, l := range c.all {
		if strings.Contains(l, "waits for approval") {
			notices++
		}
	}
	assert.Equal(t, 1, notices, "once per wait")
}

// TestAnswerWithoutUSER: `toolgate answer` without --by and without $USER or $LOGNAME names the
// identity it knows as approve does (here the OS account running it), in its output and in the
// answer the call's history records.
func TestAnswerWithoutUSER(t *testing.T) {
	me, err := user.Current()
	require.NoError(t, err)
	require.NotEmpty(t, me.Username, "the test needs an OS account with a name")
	e := newEnv(t, toolcore.MustDefine(toolcore.Definition[args]{Name: "asking", Description: "Asks whether to go on.",
		Execute: func(ctx context.Context, _ args) (any, error) {
			yes, err := toolcore.Confirm(ctx, "proceed", "Go on?")
			if err != nil {
				return nil, err
			}
			return map[string]bool{"proceeded": yes}, nil
		},
		Options: toolcore.Options{SideEffect: toolcore.ReadOnly, Interactive: true}}))
	wid, err := e.client.Start(e.ctx(), call(t, "answer-"+e.queue, "asking", `{"left":1,"right":2}`))
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		st, err := e.client.InputByWorkflowID(e.ctx(), wid)
		return err == nil && st.Waiting
	}, testTimeout, 20*time.Millisecond, "the call waits for an answer")

	out, err := toolgateWithoutUSER(t, nil, "answer", wid, "proceed=accept", "--field", "confirm=true")
	require.NoError(t, err, "toolgate answer without $USER: %s", out)
	assert.Contains(t, string(out), "(round 1) by "+me.Username)

	res, err := e.client.ResultByWorkflowID(e.ctx(), wid)
	require.NoError(t, err)
	assert.JSONEq(t, `{"proceeded":true}`, res.Content())
	var by []string
	iter := devtest.Client(t).GetWorkflowHistory(e.ctx(), wid, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for iter.HasNext() {
		ev, err := iter.Next()
		require.NoError(t, err)
		if u := ev.GetWorkflowExecutionUpdateAcceptedEventAttributes(); u != nil && u.GetAcceptedRequest().GetInput().GetName() == wire.UpdateInput {
			var a wire.InputAnswer
			require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(u.GetAcceptedRequest().GetInput().GetArgs(), &a))
			by = append(by, a.By)
		}
	}
	assert.Equal(t, []string{me.Username}, by, "the history records who answered")
}

// toolgateWithoutUSER runs the toolgate CLI against the dev server with the child environment
// and env, but neither $USER nor $LOGNAME (as under systemd, cron or a container), and returns
// its combined output.
func toolgateWithoutUSER(t *testing.T, env []string, args ...string) ([]byte, error) {
	t.Helper()
	bin, err := testbin.Toolgate()
	require.NoError(t, err)
	srv := devtest.Server(t)
	cmd := exec.Command(bin, append(args, "--address", srv.FrontendAddress(), "--namespace", srv.Namespace())...)
	for _, kv := range testbin.ChildEnv(env...) {
		if !strings.HasPrefix(kv, "USER=") && !strings.HasPrefix(kv, "LOGNAME=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	return cmd.CombinedOutput()
}
