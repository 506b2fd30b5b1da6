package replay_test

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"

	"github.com/toolgate/toolgate/codec"
	"github.com/toolgate/toolgate/internal/fixtures"
	"github.com/toolgate/toolgate/replay"
)

// TestHistoryWithoutItsKey: a recorded history whose payloads are encrypted with key "2026-12"
// replays with a keyring that holds the key, and fails with a one-line *MissingKeyError naming
// the key, not the SDK's TMPRL1100, without a codec and with a keyring of other keys.
func TestHistoryWithoutItsKey(t *testing.T) {
	keys := newKeyring(t, "2026-12")
	h := encryptedHistory(t, filepath.Join(histories, "success.json"), keys)
	reg := recordedRegistry(t)

	require.NoError(t, replay.History(h, replay.Options{Registry: reg, DataConverter: codec.DataConverter(keys)}),
		"with its key the encrypted history replays")
	for name, opts := range map[string]replay.Options{
		"no codec":   {Registry: reg},
		"other keys": {Registry: reg, DataConverter: codec.DataConverter(newKeyring(t, "2027-01"))},
	} {
		t.Run(name, func(t *testing.T) {
			err := replay.History(h, opts)
			var missing *replay.MissingKeyError
			require.True(t, errors.As(err, &missing), "got %v", err)
			assert.Equal(t, "2026-12", missing.KeyID)
			assert.Equal(t, int64(1), missing.Event, "the start event's input is the first")
			assert.Contains(t, err.Error(), `history holds payloads encrypted with key ID "2026-12"`)
			assert.NotContains(t, err.Error(), "\n")
			assert.NotContains(t, err.Error(), "TMPRL1100")
		})
	}
}

// newKeyring returns a keyring of one new key named id.
func newKeyring(t *testing.T, id string) *codec.Keyring {
	t.Helper()
	keys, err := codec.ParseKeyring(id + " " + base64.StdEncoding.EncodeToString(randomBytes(t, 32)) + "\n")
	require.NoError(t, err)
	return keys
}

func randomBytes(t *testing.T, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	_, err := rand.Read(b)
	require.NoError(t, err)
	return b
}

// encryptedHistory loads the history at path and encrypts its payloads with keys as a worker
// with that keyring would have written them: all but search attributes, which no codec sees.
func encryptedHistory(t *testing.T, path string, keys *codec.Keyring) *historypb.History {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	h, err := client.HistoryFromJSON(f, client.HistoryJSONOptions{})
	require.NoError(t, err)
	encrypted, err := fixtures.EncryptHistory(h, codec.New(keys))
	require.NoError(t, err)
	require.NotZero(t, encrypted)
	return h
}
