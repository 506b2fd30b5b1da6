package activities_test

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/toolgate/toolgate/activities"
	"github.com/toolgate/toolgate/blobs"
	"github.com/toolgate/toolgate/internal/blobstoretest"
	"github.com/toolgate/toolgate/secrets"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// executeWithParts runs ExecuteTool once with store as the worker's part store.
func executeWithParts(t *testing.T, reg *toolcore.Registry, store blobs.Store, name string) (activities.ExecuteToolOutput, error) {
	t.Helper()
	return executeInputWithParts(t, reg, store, input(name))
}

// executeInputWithParts runs ExecuteTool once on in with store as the worker's part store.
func executeInputWithParts(t *testing.T, reg *toolcore.Registry, store blobs.Store, in activities.ExecuteToolInput) (activities.ExecuteToolOutput, error) {
	t.Helper()
	return executeActivities(t, &activities.Activities{Registry: reg, Parts: store}, in)
}

// executeActivities runs a's ExecuteTool once on in.
func executeActivities(t *testing.T, a *activities.Activities, in activities.ExecuteToolInput) (activities.ExecuteToolOutput, error) {
	t.Helper()
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	a.Register(env)
	val, err := env.ExecuteActivity(wire.ExecuteToolName, in)
	if err != nil {
		return activities.ExecuteToolOutput{}, err
	}
	var out activities.ExecuteToolOutput
	require.NoError(t, val.Get(&out))
	return out, nil
}

// failingStore refuses every Put.
type failingStore struct{ blobs.Store }

func (failingStore) Put(context.Context, string, []byte) error { return errors.New("disk full") }

// TestExecuteToolKeepsParts: the parts of a Rich output go to the part store and the output
// carries their claims only; short text and links are claimed inline; the model-facing content
// is the Rich's Output.
func TestExecuteToolKeepsParts(t *testing.T) {
	ctx := context.Background()
	png := blobstoretest.Random(t, 3<<20)
	reg := newRegistry(t, tool("shot", toolcore.Options{SideEffect: toolcore.ReadOnly}, returning(toolcore.Rich{
		Output: toolcore.Text("a screenshot"),
		Parts: []toolcore.Part{
			toolcore.Image("image/png", png),
			toolcore.TextPart("caption"),
			toolcore.ResourceLink("https://example.com/full.png", "full.png", "image/png"),
		},
	}, nil)))
	store := &blobs.FileStore{Dir: filepath.Join(t.TempDir(), "blobs")}

	out, err := executeWithParts(t, reg, store, "shot")

	require.NoError(t, err)
	assert.Equal(t, "a screenshot", out.Content)
	assert.False(t, out.IsError)
	require.Len(t, out.Parts, 3)
	assert.True(t, out.Parts[0].Stored())
	assert.Equal(t, int64(len(png)), out.Parts[0].Size)
	got, err := blobs.Load(ctx, store, out.Parts[0])
	require.NoError(t, err)
	assert.True(t, bytes.Equal(png, got))
	assert.Equal(t, "caption", out.Parts[1].Text)
	assert.Equal(t, "full.png", out.Parts[2].Name)
}

// TestExecuteToolPartsFailures: without a store, with a failing store, or with invalid parts the
// call ends with an error result (retried first for a ReadOnly tool whose store failed) and no
// claims; nothing is left in the store.
func TestExecuteToolPartsFailures(t *testing.T) {
	img := toolcore.Rich{Output: "x", Parts: []toolcore.Part{toolcore.Image("image/png", []byte("png")), toolcore.Audio("audio/wav", []byte("wav"))}}
	unsafeReg := newRegistry(t, tool("img", toolcore.Options{}, returning(img, nil)),
		tool("bad", toolcore.Options{}, returning(toolcore.Rich{Parts: []toolcore.Part{toolcore.Image("text/html", nil)}}, nil)),
		tool("opaque", toolcore.Options{}, returning(toolcore.Rich{Output: time.Now(), Parts: img.Parts}, nil)))
	dir := filepath.Join(t.TempDir(), "blobs")
	files := &blobs.FileStore{Dir: dir}

	out, err := executeWithParts(t, unsafeReg, nil, "img")
	require.NoError(t, err)
	assert.Equal(t, errContent("TOOL_EXECUTION_FAILED", "the tool returned 2 parts to keep, but this worker has no part store (worker.Options.Parts)"), out.Content)
	assert.Nil(t, out.Parts)

	out, err = executeWithParts(t, unsafeReg, failingStore{files}, "img")
	require.NoError(t, err)
	assert.True(t, out.IsError)
	assert.Contains(t, out.Content, "the result's parts could not be kept: the part store failed (the worker's log says why)")
	assert.NotContains(t, out.Content, "disk full", "the store's error stays in the log")

	out, err = executeWithParts(t, unsafeReg, files, "bad")
	require.NoError(t, err)
	assert.Contains(t, out.Content, "TOOL_OUTPUT_SERIALIZATION_FAILED")
	assert.Contains(t, out.Content, "parts[0]: image part needs a mimeType image/")

	out, err = executeWithParts(t, unsafeReg, files, "opaque")
	require.NoError(t, err)
	assert.Contains(t, out.Content, "TOOL_OUTPUT_SERIALIZATION_FAILED")
	assert.Nil(t, out.Parts)
	n, err := files.Sweep(context.Background(), time.Now().Add(time.Hour))
	require.NoError(t, err)
	assert.Zero(t, n, "the parts of a result that is not recorded are deleted")

	readOnly := newRegistry(t, tool("img", toolcore.Options{SideEffect: toolcore.ReadOnly, MaxAttempts: 3}, returning(img, nil)))
	first := input("img")
	first.MaxAttempts = 3
	_, err = executeInputWithParts(t, readOnly, failingStore{files}, first)
	assert.Equal(t, wire.ErrTypeTransient, appError(t, err).Type(), "a ReadOnly tool runs again when its parts could not be kept")
}

// TestExecuteToolRedactsTextParts: the attempt's secrets are redacted from text parts, inline or
// stored, as from the content.
func TestExecuteToolRedactsTextParts(t *testing.T) {
	const secret = "sk-live-7f3a9c"
	long := strings.Repeat("line without it\n", 100) + "token " + secret
	reg := newRegistry(t, tool("leaky", toolcore.Options{Secrets: []string{"api_key"}}, returning(toolcore.Rich{
		Output: toolcore.Text("used " + secret),
		Parts:  []toolcore.Part{toolcore.TextPart("short " + secret), toolcore.TextPart(long)},
	}, nil)))
	store := &blobs.FileStore{Dir: filepath.Join(t.TempDir(), "blobs")}

	out, err := executeActivities(t, &activities.Activities{Registry: reg, Parts: store, Secrets: secrets.Map{"api_key": secret}}, input("leaky"))

	require.NoError(t, err)
	assert.NotContains(t, out.Content, secret)
	require.Len(t, out.Parts, 2)
	assert.NotContains(t, out.Parts[0].Text, secret)
	assert.Contains(t, out.Parts[0].Text, "short ")
	stored, err := blobs.Load(context.Background(), store, out.Parts[1])
	require.NoError(t, err)
	assert.NotContains(t, string(stored), secret)
	assert.Contains(t, string(stored), "line without it")
}
