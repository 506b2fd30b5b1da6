package mcp_test

import (
	"context"
	"net/http"
	"slices"
	"sync/atomic"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	tgclient "github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/internal/devtest"
	"github.com/toolgate/toolgate/internal/fixtures"
	"github.com/toolgate/toolgate/mcp"
	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/worker"
)

// TestMCPCallsDecidedByPolicy: through toolgate's MCP server with bearer tokens, the worker's
// policy decides each call on the token's principal and arguments: a guest's write_file and
// anyone's add of 5000 end POLICY_DENIED (an error result the model reads) with nothing run; the
// same calls allowed run once; tools/list hides write_file from the guest only.
func TestMCPCallsDecidedByPolicy(t *testing.T) {
	var writes, adds atomic.Int32
	type addArgs struct {
		Left  int64 `json:"left"`
		Right int64 `json:"right"`
	}
	reg, err := toolcore.NewRegistry(
		toolcore.MustDefine(toolcore.Definition[tagArgs]{
			Name:        "write_file",
			Description: "Writes a file (a note, here).",
			Execute: func(context.Context, tagArgs) (any, error) {
				writes.Add(1)
				return "written", nil
			},
		}),
		toolcore.MustDefine(toolcore.Definition[addArgs]{
			Name:        "add",
			Description: "Adds two integers.",
			Execute: func(_ context.Context, a addArgs) (any, error) {
				adds.Add(1)
				return a.Left + a.Right, nil
			},
			Options: toolcore.Options{SideEffect: toolcore.ReadOnly},
		}),
	)
	require.NoError(t, err)
	set, err := policy.Parse("example.cedar", []byte(fixtures.ExamplePolicy))
	require.NoError(t, err)
	src := policy.NewSource(set, false)
	c := devtest.Client(t)
	queue := devtest.TaskQueue(t)
	w, err := worker.New(c, "", reg, worker.Options{TaskQueue: queue, Policy: src})
	require.NoError(t, err)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	tg := tgclient.New(c, tgclient.Options{TaskQueue: queue, Scope: queue})
	infos, err := tg.ListTools(t.Context())
	require.NoError(t, err)

	url, token := jwtServer(t, mcp.NewServer(tg, infos, mcp.Options{Policy: src}), mcp.HTTPOptions{})
	session := func(sub string, groups ...any) *sdk.ClientSession {
		return connectRevision(t, &sdk.StreamableClientTransport{Endpoint: url,
			HTTPClient: &http.Client{Transport: bearerTransport(token(sub, map[string]any{"groups": groups}))}}, "2025-11-25")
	}
	call := func(cs *sdk.ClientSession, name string, args map[string]any) *sdk.CallToolResult {
		res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: name, Arguments: args})
		require.NoError(t, err)
		return res
	}
	listed := func(cs *sdk.ClientSession) []string {
		res, err := cs.ListTools(t.Context(), nil)
		require.NoError(t, err)
		var names []string
		for _, tool := range res.Tools {
			names = append(names, tool.Name)
		}
		slices.Sort(names)
		return names
	}
	bob, alice := session("bob", "guests"), session("alice")

	res := call(bob, "write_file", map[string]any{"tag": "x"})
	assert.True(t, res.IsError)
	assert.Contains(t, text(t, res), `"code":"POLICY_DENIED"`)
	assert.Contains(t, text(t, res), `guests-no-write`)
	res = call(alice, "add", map[string]any{"left": 5000, "right": 1})
	assert.True(t, res.IsError)
	assert.Contains(t, text(t, res), `add takes left below 1000`)
	assert.Zero(t, writes.Load()+adds.Load(), "a denied call runs nothing")

	res = call(alice, "write_file", map[string]any{"tag": "y"})
	assert.False(t, res.IsError, text(t, res))
	res = call(bob, "add", map[string]any{"left": 5, "right": 1})
	assert.False(t, res.IsError, text(t, res))
	assert.Equal(t, int32(1), writes.Load())
	assert.Equal(t, int32(1), adds.Load())

	assert.Equal(t, []string{"add"}, listed(bob), "write_file is hidden from a guest")
	assert.Equal(t, []string{"add", "write_file"}, listed(alice))
}
