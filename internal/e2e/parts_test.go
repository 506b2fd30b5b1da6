package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	sdkclient "go.temporal.io/sdk/client"
	"google.golang.org/protobuf/proto"

	"github.com/toolgate/toolgate/blobs"
	"github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/codec"
	"github.com/toolgate/toolgate/internal/blobstoretest"
	"github.com/toolgate/toolgate/internal/devtest"
	"github.com/toolgate/toolgate/internal/testbin"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/worker"
)

// TestRichResultOutOfHistory: a tool returns a 20 MB resource and an image beside its text; the
// worker keeps them in its part store, sealed with the codec key; the history holds their
// claims only (each result payload under 4 KiB, the whole history far from a megabyte); the
// stored bytes are ciphertext; `toolgate result --parts DIR` writes both parts back, intact,
// from the store with the same --codec-key.
func TestRichResultOutOfHistory(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	secret := blobstoretest.Random(t, codec.KeySize)
	keyFile := filepath.Join(t.TempDir(), "keys.txt")
	require.NoError(t, os.WriteFile(keyFile, []byte("k1 "+base64.StdEncoding.EncodeToString(secret)+"\n"), 0o600))
	ring, err := codec.LoadKeyring(keyFile, nil)
	require.NoError(t, err)
	report := blobstoretest.Random(t, 20<<20)
	png := append([]byte("\x89PNG\r\n\x1a\n"), blobstoretest.Random(t, 100_000)...)
	tool := define(t, "report", toolcore.Options{SideEffect: toolcore.ReadOnly}, func(context.Context, args) (any, error) {
		return toolcore.Rich{Output: toolcore.Text("the report is attached"), Parts: []toolcore.Part{
			toolcore.Resource("file:///report.bin", "application/octet-stream", report),
			toolcore.Image("image/png", png),
			toolcore.ResourceLink("https://example.com/dashboard", "dashboard", "text/html"),
		}}, nil
	})
	dir := filepath.Join(t.TempDir(), "parts")
	srv := devtest.Server(t)
	dc := codec.DataConverter(ring)
	c, err := sdkclient.Dial(sdkclient.Options{HostPort: srv.FrontendAddress(), Namespace: srv.Namespace(), DataConverter: dc})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	reg, err := toolcore.NewRegistry(tool)
	require.NoError(t, err)
	queue := devtest.TaskQueue(t)
	w, err := worker.New(c, srv.Namespace(), reg, worker.Options{TaskQueue: queue, DataConverter: dc,
		Parts: &blobs.Sealed{Store: &blobs.FileStore{Dir: dir}, Keys: ring}})
	require.NoError(t, err)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	tg := client.New(c, client.Options{TaskQueue: queue, Namespace: srv.Namespace(), DataConverter: dc})

	res, err := tg.Execute(ctx, call(t, "parts-"+queue, "report", `{}`))

	require.NoError(t, err)
	require.False(t, res.IsError(), res.Content())
	assert.Equal(t, "the report is attached", res.Content())
	parts := res.Parts()
	require.Len(t, parts, 3)
	assert.Equal(t, int64(len(report)), parts[0].Size)
	assert.True(t, parts[0].Stored())
	assert.Equal(t, "dashboard", parts[2].Name)

	// History: claims only.
	wid := tg.WorkflowID("parts-" + queue)
	hist := rawHistory(ctx, t, devtest.Client(t), wid)
	raw, err := proto.Marshal(hist)
	require.NoError(t, err)
	assert.Less(t, len(raw), 64<<10, "the history holds no part's bytes")
	for _, e := range hist.Events {
		switch e.GetEventType() {
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
			assert.Less(t, proto.Size(e.GetActivityTaskCompletedEventAttributes().GetResult()), 4096)
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED:
			assert.Less(t, proto.Size(e.GetWorkflowExecutionCompletedEventAttributes().GetResult()), 4096)
		}
	}
	// The store: ciphertext.
	stored, err := os.ReadFile(filepath.Join(dir, parts[0].Key))
	require.NoError(t, err)
	assert.False(t, bytes.Contains(stored, report[:64]), "the stored report is ciphertext")

	// toolgate result --parts: the bytes back, intact.
	bin, err := testbin.Toolgate()
	require.NoError(t, err)
	out := filepath.Join(t.TempDir(), "out")
	cmd := exec.CommandContext(ctx, bin, "result", wid, "--address", srv.FrontendAddress(), "--namespace", srv.Namespace(),
		"--codec-key", keyFile, "--part-store", dir, "--parts", out)
	cmd.Env = testbin.ChildEnv()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), stderr.String())
	var printed toolcore.Result
	require.NoError(t, printed.UnmarshalJSON(bytes.TrimSpace(stdout.Bytes())))
	assert.Equal(t, parts, printed.Parts(), "the printed result carries the claims")
	reportFiles, err := filepath.Glob(filepath.Join(out, "part-0*"))
	require.NoError(t, err)
	require.Len(t, reportFiles, 1)
	got, err := os.ReadFile(reportFiles[0])
	require.NoError(t, err)
	assert.True(t, bytes.Equal(report, got), "the 20 MB part is written back intact")
	got, err = os.ReadFile(filepath.Join(out, "part-1.png"))
	require.NoError(t, err)
	assert.True(t, bytes.Equal(png, got))
	files, err := os.ReadDir(out)
	require.NoError(t, err)
	assert.Len(t, files, 2, "a link has no bytes to write")

	// From a store that lacks them, the command fails naming the part.
	cmd = exec.CommandContext(ctx, bin, "result", wid, "--address", srv.FrontendAddress(), "--namespace", srv.Namespace(),
		"--codec-key", keyFile, "--part-store", filepath.Join(t.TempDir(), "elsewhere"), "--parts", filepath.Join(t.TempDir(), "out2"))
	cmd.Env = testbin.ChildEnv()
	msg, err := cmd.CombinedOutput()
	require.Error(t, err)
	assert.Contains(t, string(msg), "part 0 (resource, 20971520 bytes)")
	assert.Contains(t, string(msg), "blob not found")
}
