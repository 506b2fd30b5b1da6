package mcp_test

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/blobs"
	tgclient "github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/internal/blobstoretest"
	"github.com/toolgate/toolgate/internal/devtest"
	"github.com/toolgate/toolgate/mcp"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/worker"
)

// connectLarge connects a Go SDK client to s over pipes whose frames may be 64 MiB: the SDK's
// default (sdk.DefaultMaxLineLength, 16 MiB) is smaller than a 20 MB part in base64, which a
// client of toolgate must allow for its largest parts.
func connectLarge(t *testing.T, s *sdk.Server) *sdk.ClientSession {
	const maxFrame = 64 << 20
	toServerR, toServerW := io.Pipe()
	toClientR, toClientW := io.Pipe()
	ss, err := s.Connect(t.Context(), &sdk.IOTransport{Reader: toServerR, Writer: toClientW, MaxLineLength: maxFrame}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ss.Close() })
	return connectClient(t, &sdk.IOTransport{Reader: toClientR, Writer: toServerW, MaxLineLength: maxFrame})
}

// TestRichResultOverMCP: a tool's parts reach an MCP client as their content types, bytes
// intact (a 3 MB image among them: larger than a payload may be; the 20 MB case is
// cmd/toolgate's TestResultParts, outside the race detector), after the model-facing text: image and audio as base64
// data, a textual resource as text, a binary one as a blob, a link as resource_link; the store
// holds ciphertext (sealed with a codec key); a server without the store says which part it
// cannot return instead of other bytes.
func TestRichResultOverMCP(t *testing.T) {
	png := blobstoretest.Random(t, 3<<20)
	wav := blobstoretest.Random(t, 4096)
	bin := blobstoretest.Random(t, 1000)
	csv := bytes.Repeat([]byte("a,b,c\n"), 200)
	tool := toolcore.MustDefine(toolcore.Definition[noArgs]{
		Name: "report", Description: "returns parts",
		Validate: func(toolcore.Arguments) toolcore.Decision[noArgs] { return toolcore.Accept(noArgs{}) },
		Execute: func(context.Context, noArgs) (any, error) {
			return toolcore.Rich{Output: toolcore.Text("the report"), Parts: []toolcore.Part{
				toolcore.Image("image/png", png),
				toolcore.Audio("audio/wav", wav),
				toolcore.Resource("file:///report.csv", "text/csv", csv),
				toolcore.Resource("file:///report.bin", "application/octet-stream", bin),
				toolcore.ResourceLink("https://example.com/full", "full report", "text/html"),
				toolcore.TextPart("a short note"),
			}}, nil
		},
		Options: toolcore.Options{SideEffect: toolcore.ReadOnly},
	})
	reg, err := toolcore.NewRegistry(tool)
	require.NoError(t, err)
	dir := filepath.Join(t.TempDir(), "parts")
	store := &blobs.Sealed{Store: &blobs.FileStore{Dir: dir}, Keys: blobstoretest.Keyring(t, "k1")}
	c := devtest.Client(t)
	queue := devtest.TaskQueue(t)
	w, err := worker.New(c, "", reg, worker.Options{TaskQueue: queue, Parts: store})
	require.NoError(t, err)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	tg := tgclient.New(c, tgclient.Options{TaskQueue: queue})
	infos, err := tg.ListTools(t.Context())
	require.NoError(t, err)

	cs := connectLarge(t, mcp.NewServer(tg, infos, mcp.Options{Parts: store}))
	out, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "report", Arguments: map[string]any{}, Meta: sdk.Meta{mcp.IdempotencyKeyMeta: "rich-1"}})

	require.NoError(t, err)
	require.False(t, out.IsError)
	require.Len(t, out.Content, 7)
	assert.Equal(t, "the report", out.Content[0].(*sdk.TextContent).Text)
	image := out.Content[1].(*sdk.ImageContent)
	assert.Equal(t, "image/png", image.MIMEType)
	assert.True(t, bytes.Equal(png, image.Data), "the 20 MB image arrives intact")
	audio := out.Content[2].(*sdk.AudioContent)
	assert.Equal(t, "audio/wav", audio.MIMEType)
	assert.True(t, bytes.Equal(wav, audio.Data))
	assert.Equal(t, &sdk.ResourceContents{URI: "file:///report.csv", MIMEType: "text/csv", Text: string(csv)}, out.Content[3].(*sdk.EmbeddedResource).Resource)
	assert.Equal(t, &sdk.ResourceContents{URI: "file:///report.bin", MIMEType: "application/octet-stream", Blob: bin}, out.Content[4].(*sdk.EmbeddedResource).Resource)
	assert.Equal(t, &sdk.ResourceLink{URI: "https://example.com/full", Name: "full report", MIMEType: "text/html"}, out.Content[5])
	assert.Equal(t, "a short note", out.Content[6].(*sdk.TextContent).Text)

	// The store holds ciphertext: no stored file holds the image's first bytes.
	res, err := tg.ResultByWorkflowID(t.Context(), out.Meta[mcp.WorkflowIDMeta].(string))
	require.NoError(t, err)
	sealed, err := (&blobs.FileStore{Dir: dir}).Get(t.Context(), res.Parts()[0].Key)
	require.NoError(t, err)
	assert.False(t, bytes.Contains(sealed, png[:64]))

	// Without the store: the text, the links and inline text; each other part named, not sent.
	bare := connectLarge(t, mcp.NewServer(tg, infos, mcp.Options{}))
	out, err = bare.CallTool(t.Context(), &sdk.CallToolParams{Name: "report", Arguments: map[string]any{}, Meta: sdk.Meta{mcp.IdempotencyKeyMeta: "rich-1"}})
	require.NoError(t, err)
	require.Len(t, out.Content, 7)
	assert.Contains(t, out.Content[1].(*sdk.TextContent).Text, "[part 0: image image/png of 3145728 bytes, sha256 "+res.Parts()[0].SHA256+", is not available: no part store]")
	assert.Equal(t, "a short note", out.Content[6].(*sdk.TextContent).Text)
}
