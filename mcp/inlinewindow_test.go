package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	tgclient "github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/internal/devtest"
	"github.com/toolgate/toolgate/mcp"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
	"github.com/toolgate/toolgate/worker"
)

// TaskInlineWindow counts from the tool's start: calls that waited longer than it for a worker
// are still answered inline (a quick tool) or with an InputRequiredResult (a tool that asks at
// once) when the worker comes, never with a task (the conformance suite's
// tasks-mrtr-composition failed on a busy machine when the window counted from the request).
func TestInlineWindowCountsFromTheToolsStart(t *testing.T) {
	reg, err := toolcore.NewRegistry(
		toolcore.MustDefine(toolcore.Definition[noArgs]{Name: "quick", Description: "Answers at once.",
			Execute: func(context.Context, noArgs) (any, error) { return map[string]any{"quick": true}, nil },
			Options: toolcore.Options{SideEffect: toolcore.ReadOnly}}),
		toolcore.MustDefine(toolcore.Definition[noArgs]{Name: "ask_first", Description: "Asks a name at once.",
			Execute: func(ctx context.Context, _ noArgs) (any, error) {
				r, err := toolcore.Elicit(ctx, "name", toolcore.Elicitation{Message: "Your name?",
					RequestedSchema: json.RawMessage(`{"type":"object","properties":{"value":{"type":"string"}},"required":["value"]}`)})
				if err != nil {
					return nil, err
				}
				return map[string]any{"name": r.Content["value"]}, nil
			},
			Options: toolcore.Options{SideEffect: toolcore.ReadOnly, Interactive: true}}),
	)
	require.NoError(t, err)
	var infos []toolcore.ToolInfo
	for _, name := range reg.Names() {
		tool, _ := reg.Get(name)
		infos = append(infos, tool.Info())
	}
	c := devtest.Client(t)
	queue := devtest.TaskQueue(t) // no worker until both calls have waited past the window
	tg := tgclient.New(c, tgclient.Options{TaskQueue: queue})
	s := mcp.NewServer(tg, infos, mcp.Options{})

	asked := make(chan string, 1)
	cl := sdk.NewClient(&sdk.Implementation{Name: "inline-window-test", Version: "1"}, &sdk.ClientOptions{
		Capabilities: &sdk.ClientCapabilities{Extensions: map[string]any{wire.MCPTasksExtension: map[string]any{}},
			Elicitation: &sdk.ElicitationCapabilities{Form: &sdk.FormElicitationCapabilities{}}},
		ElicitationHandler: func(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			asked <- req.Params.Message
			return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"value": "Ada"}}, nil
		}})
	serverT, clientT := sdk.NewInMemoryTransports()
	ss, err := s.Connect(t.Context(), mcp.Transport(serverT), nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ss.Close() })
	cs, err := cl.Connect(t.Context(), clientT, &sdk.ClientSessionOptions{ProtocolVersion: mcp.StatelessRevision})
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })

	run := time.Now().UnixNano()
	type answer struct {
		res *sdk.CallToolResult
		err error
	}
	call := func(name string) (string, chan answer) {
		key := fmt.Sprintf("%s-%d", name, run)
		done := make(chan answer, 1)
		go func() {
			res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: name, Arguments: map[string]any{},
				Meta: sdk.Meta{mcp.IdempotencyKeyMeta: key}})
			done <- answer{res, err}
		}()
		return "mcp/toolcall-" + key, done
	}
	quickID, quick := call("quick")
	askID, ask := call("ask_first")
	for _, id := range []string{quickID, askID} {
		require.Eventually(t, func() bool {
			st, err := tg.StatusByWorkflowID(t.Context(), id)
			return err == nil && st.Waiting != nil && st.Waiting.Kind == tgclient.WaitWorker &&
				!st.Waiting.Since.IsZero() && time.Since(st.Waiting.Since) > mcp.TaskInlineWindow
		}, consentWait, 50*time.Millisecond, "%s waits for a worker longer than the window", id)
	}
	select {
	case a := <-quick:
		t.Fatalf("quick was answered before its tool ran: %+v %v", a.res, a.err)
	default:
	}

	w, err := worker.New(c, "", reg, worker.Options{TaskQueue: queue})
	require.NoError(t, err)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)

	a := <-quick
	require.NoError(t, a.err)
	assert.JSONEq(t, `{"quick":true}`, text(t, a.res), "answered inline, not with a task")
	a = <-ask
	require.NoError(t, a.err)
	select {
	case m := <-asked:
		assert.Equal(t, "Your name?", m, "round 1 was an InputRequiredResult")
	default:
		t.Fatalf("ask_first became a task without asking its request: %+v", a.res)
	}
}
