package mcp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/mcp"
	"github.com/toolgate/toolgate/toolcore"
)

// askingRemote is an MCP server whose tool "confirm" asks its client "proceed?" (an
// InputRequiredResult at 2026-07-28, which the SDK turns into elicitation/create on the stream
// for older clients) and answers what it was told.
func askingRemote(t *testing.T) string {
	t.Helper()
	s := sdk.NewServer(&sdk.Implementation{Name: "asking", Version: "1"}, nil)
	s.AddTool(&sdk.Tool{Name: "confirm", Description: "Asks proceed?", InputSchema: map[string]any{"type": "object"},
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			answer, ok := req.Params.InputResponses["proceed"].(*sdk.ElicitResult)
			if !ok {
				return &sdk.CallToolResult{InputRequests: sdk.InputRequestMap{"proceed": &sdk.ElicitParams{Message: "Proceed with the remote delete?",
					RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"confirm": map[string]any{"type": "boolean"}}}}}}, nil
			}
			yes, _ := answer.Content["confirm"].(bool)
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: map[bool]string{true: "remote deleted", false: "remote kept"}[yes]}}}, nil
		})
	srv := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil))
	t.Cleanup(srv.Close)
	return srv.URL
}

// A mounted server that asks for input (MountOptions.AskCaller) is relayed both ways: its
// elicitation becomes the toolgate call's question, which the MCP front asks its own client at
// both revisions, and the answer goes back to the mounted server, whose result completes the call.
func TestMountedServerAsksTheCaller(t *testing.T) {
	transport, err := mcp.Target(askingRemote(t))
	require.NoError(t, err)
	remote, err := mcp.Mount(t.Context(), "far", transport, mcp.MountOptions{AskCaller: true})
	require.NoError(t, err)
	t.Cleanup(func() { _ = remote.Close() })
	reg, err := toolcore.NewRegistry(remote.Tools()...)
	require.NoError(t, err)
	tg, _ := servingWorker(t, reg)
	infos, err := tg.ListTools(t.Context())
	require.NoError(t, err)
	require.Len(t, infos, 1)
	assert.True(t, infos[0].Interactive)
	srv := httptest.NewServer(mcp.HTTPHandler(mcp.NewServer(tg, infos, mcp.Options{}), mcp.HTTPOptions{}))
	t.Cleanup(srv.Close)

	for _, revision := range []string{"2025-11-25", mcp.StatelessRevision} {
		t.Run(revision, func(t *testing.T) {
			asked := make(chan string, 4)
			cs := answeringClient(t, srv.URL, revision, func(*sdk.ElicitParams) map[string]any {
				return map[string]any{"confirm": true}
			}, asked, nil)
			ctx, cancel := context.WithTimeout(t.Context(), consentWait)
			defer cancel()
			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "far_confirm", Arguments: map[string]any{}})
			require.NoError(t, err)
			require.False(t, res.IsError, "%s", text(t, res))
			assert.Equal(t, "remote deleted", text(t, res))
			assert.True(t, strings.HasSuffix(receive(t, asked, "the relayed question"), "Proceed with the remote delete?"))
			assert.Empty(t, asked, "asked once")
		})
	}
}
