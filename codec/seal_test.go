package codec_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"

	"github.com/toolgate/toolgate/codec"
)

// TestSealOpen: a sealed value opens with its key and additional data only, with any key of the
// ring, and is not a payload Decode accepts.
func TestSealOpen(t *testing.T) {
	old := keyring(t, key("k1", 1))
	rotated := keyring(t, key("k2", 2), key("k1", 1))
	id, sealed, err := codec.Seal(old, []byte("hunter2"), []byte("row alice"))
	require.NoError(t, err)
	require.Equal(t, "k1", id)
	assert.NotContains(t, string(sealed), "hunter2")
	_, again, err := codec.Seal(old, []byte("hunter2"), []byte("row alice"))
	require.NoError(t, err)
	assert.NotEqual(t, sealed, again, "a fresh nonce each time")

	tests := []struct {
		name    string
		keys    codec.KeySource
		keyID   string
		sealed  []byte
		aad     string
		wantErr error
	}{
		{name: "same ring", keys: old, keyID: "k1", sealed: sealed, aad: "row alice"},
		{name: "rotated ring", keys: rotated, keyID: "k1", sealed: sealed, aad: "row alice"},
		{name: "other row", keys: old, keyID: "k1", sealed: sealed, aad: "row bob", wantErr: codec.ErrNotAuthentic},
		{name: "altered", keys: old, keyID: "k1", sealed: append(append([]byte{}, sealed[:len(sealed)-1]...), sealed[len(sealed)-1]^1), aad: "row alice", wantErr: codec.ErrNotAuthentic},
		{name: "truncated", keys: old, keyID: "k1", sealed: sealed[:5], aad: "row alice", wantErr: codec.ErrNotAuthentic},
		{name: "other key's name", keys: keyring(t, key("k1", 1), codec.Key{ID: "k3", Secret: key("", 1).Secret}), keyID: "k3", sealed: sealed, aad: "row alice", wantErr: codec.ErrNotAuthentic},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plain, err := codec.Open(tt.keys, tt.keyID, tt.sealed, []byte(tt.aad))
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, "hunter2", string(plain))
		})
	}

	_, err = codec.Open(keyring(t, key("k2", 2)), "k1", sealed, []byte("row alice"))
	var notHeld *codec.KeyNotHeldError
	require.ErrorAs(t, err, &notHeld)
	assert.Equal(t, "k1", notHeld.KeyID)

	_, err = codec.New(old).Decode([]*commonpb.Payload{{
		Metadata: map[string][]byte{codec.MetadataEncoding: []byte(codec.EncodingEncrypted), codec.MetadataKeyID: []byte("k1")},
		Data:     sealed,
	}})
	require.Error(t, err, "a sealed value passed off as a payload does not decode")
}
