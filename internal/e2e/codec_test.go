package e2e

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	sdkclient "go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"
	"google.golang.org/protobuf/proto"

	"github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/codec"
	"github.com/toolgate/toolgate/internal/devtest"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/worker"
	"github.com/toolgate/toolgate/workflows"
)

// TestEncryptedCalls runs calls with an AES-GCM codec on the worker and the client and checks,
// on the real server: the stored history holds no plaintext of the arguments or the result; a
// key rotation keeps the old call readable and its resubmission answered; the history replays
// with the keys and not without them.
func TestEncryptedCalls(t *testing.T) {
	const canary = "plaintext-canary-8f3a"
	k1 := codec.Key{ID: "k1", Secret: bytes.Repeat([]byte{1}, codec.KeySize)}
	k2 := codec.Key{ID: "k2", Secret: bytes.Repeat([]byte{2}, codec.KeySize)}
	before, err := codec.NewKeyring(k1)
	require.NoError(t, err)
	rotated, err := codec.NewKeyring(k2, k1)
	require.NoError(t, err)

	queue := devtest.TaskQueue(t)
	echo := define(t, "echo_tag", toolcore.Options{SideEffect: toolcore.ReadOnly}, func(_ context.Context, a args) (any, error) {
		return map[string]string{"echo": a.Tag}, nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()

	// Before rotation: k1 encrypts.
	_, tg1, w1 := encryptedEnv(t, queue, before, echo)
	oldCall := call(t, "enc-1", "echo_tag", `{"tag":"`+canary+`"}`)
	res, err := tg1.Execute(ctx, oldCall)
	require.NoError(t, err)
	assert.Contains(t, res.Content(), canary, "the client decodes the result")

	plain := devtest.Client(t)
	hist := rawHistory(ctx, t, plain, tg1.WorkflowID("enc-1"))
	raw, err := proto.Marshal(hist)
	require.NoError(t, err)
	assert.NotContains(t, string(raw), canary, "the stored history holds no plaintext argument or result")
	input := hist.Events[0].GetWorkflowExecutionStartedEventAttributes().GetInput().GetPayloads()[0]
	assert.Equal(t, codec.EncodingEncrypted, string(input.GetMetadata()[codec.MetadataEncoding]))
	assert.Equal(t, "k1", string(input.GetMetadata()[codec.MetadataKeyID]))
	w1.Stop()

	// After rotation: k2 encrypts, k1 still decrypts.
	_, tg2, _ := encryptedEnv(t, queue, rotated, echo)
	again, err := tg2.Execute(ctx, oldCall)
	require.NoError(t, err, "resubmitting an old call compares its k1-encrypted input")
	assert.Equal(t, wireJSON(t, res), wireJSON(t, again))
	newRes, err := tg2.Execute(ctx, call(t, "enc-2", "echo_tag", `{"tag":"`+canary+`"}`))
	require.NoError(t, err)
	assert.Contains(t, newRes.Content(), canary)
	newInput := rawHistory(ctx, t, plain, tg2.WorkflowID("enc-2")).Events[0].GetWorkflowExecutionStartedEventAttributes().GetInput().GetPayloads()[0]
	assert.Equal(t, "k2", string(newInput.GetMetadata()[codec.MetadataKeyID]))

	// Replay of the encrypted history: passes with the keys, fails without them.
	reg, err := toolcore.NewRegistry(echo)
	require.NoError(t, err)
	replay := func(dc sdkworker.WorkflowReplayerOptions) error {
		r, err := sdkworker.NewWorkflowReplayerWithOptions(dc)
		require.NoError(t, err)
		(&workflows.Workflows{Registry: reg, SearchAttributes: true}).Register(r)
		return r.ReplayWorkflowHistory(nil, hist)
	}
	assert.NoError(t, replay(sdkworker.WorkflowReplayerOptions{DataConverter: codec.DataConverter(rotated)}))
	assert.Error(t, replay(sdkworker.WorkflowReplayerOptions{}), "a history encrypted with k1 cannot replay without it")
}

// encryptedEnv dials a client with keys, starts a worker for tools on queue with it (stopped at
// cleanup), and returns both with a toolgate client.
func encryptedEnv(t *testing.T, queue string, keys *codec.Keyring, tools ...toolcore.Tool) (sdkclient.Client, *client.Client, *worker.Worker) {
	t.Helper()
	srv := devtest.Server(t)
	dc := codec.DataConverter(keys)
	c, err := sdkclient.Dial(sdkclient.Options{HostPort: srv.FrontendAddress(), Namespace: srv.Namespace(), DataConverter: dc})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	reg, err := toolcore.NewRegistry(tools...)
	require.NoError(t, err)
	w, err := worker.New(c, srv.Namespace(), reg, worker.Options{TaskQueue: queue, DataConverter: dc})
	require.NoError(t, err)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	return c, client.New(c, client.Options{TaskQueue: queue, Scope: queue, Namespace: srv.Namespace(), DataConverter: dc}), w
}

// rawHistory reads a closed workflow's history through a client without the codec: the bytes
// the server stores.
func rawHistory(ctx context.Context, t *testing.T, c sdkclient.Client, workflowID string) *historypb.History {
	t.Helper()
	iter := c.GetWorkflowHistory(ctx, workflowID, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	hist := &historypb.History{}
	for iter.HasNext() {
		e, err := iter.Next()
		require.NoError(t, err)
		hist.Events = append(hist.Events, e)
	}
	require.NotEmpty(t, hist.Events)
	return hist
}
