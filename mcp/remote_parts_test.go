package mcp_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/blobs"
	tgclient "github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/internal/devtest"
	"github.com/toolgate/toolgate/mcp"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/worker"
)

// TestMountedBinaryContentKeptAsParts: with KeepParts a mounted server's image, audio and
// embedded resources become the call's parts, kept in the worker's part store with their bytes
// intact, while the content still describes them by size.
func TestMountedBinaryContentKeptAsParts(t *testing.T) {
	_, url := newRemoteServer(t)
	transport, err := mcp.Target(url)
	require.NoError(t, err)
	remote, err := mcp.Mount(t.Context(), "go", transport, mcp.MountOptions{HeartbeatTimeout: 2 * time.Second, KeepParts: true})
	require.NoError(t, err)
	t.Cleanup(func() { _ = remote.Close() })
	reg, err := toolcore.NewRegistry(remote.Tools()...)
	require.NoError(t, err)
	store := &blobs.FileStore{Dir: filepath.Join(t.TempDir(), "parts")}
	queue := devtest.TaskQueue(t)
	w, err := worker.New(devtest.Client(t), "", reg, worker.Options{TaskQueue: queue, Parts: store})
	require.NoError(t, err)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	tg := tgclient.New(devtest.Client(t), tgclient.Options{TaskQueue: queue})

	res := execute(t, tg, "picture-parts-1", "go_picture", `{}`)

	require.False(t, res.IsError(), res.Content())
	assert.Contains(t, res.Content(), `"omittedBytes":4`, "the content describes the image as before")
	parts := res.Parts()
	require.Len(t, parts, 4)
	want := []struct {
		typ  toolcore.PartType
		mime string
		data string
	}{
		{toolcore.PartImage, "image/png", "\x89PNG"},
		{toolcore.PartAudio, "audio/wav", "RIFF0"},
		{toolcore.PartResource, "application/octet-stream", "\x01\x02\x03"},
		{toolcore.PartResource, "text/plain", "embedded text"},
	}
	for i, w := range want {
		assert.Equal(t, w.typ, parts[i].Type)
		assert.Equal(t, w.mime, parts[i].MimeType)
		data, err := blobs.Load(t.Context(), store, parts[i])
		require.NoError(t, err)
		assert.Equal(t, w.data, string(data))
	}
	assert.Equal(t, "file:///x.bin", parts[2].URI)
}
