package main

import (
	"crypto/rand"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/toolgate/toolgate/codec"
	"github.com/toolgate/toolgate/internal/fixtures"
)

const histories = "../../testdata/histories"

// TestReplayMissingToolIsOneLine: a history whose tool this build's toolbox lacks (the fixture
// tools are the tests' own) fails with one line naming the tool and the toolbox, whether its run
// got as far as the tool's activity or only to an approval's timer, and neither stream carries
// the SDK's TMPRL1100 panic or a stack trace; the other files still replay.
func TestReplayMissingToolIsOneLine(t *testing.T) {
	approved := filepath.Join(histories, "fixtures", "approval-approved.json")
	rejected := filepath.Join(histories, "fixtures", "approval-rejected.json")
	success := filepath.Join(histories, "success.json")

	code, stdout, stderr := runIn([]string{"replay", approved, rejected, success}, nil, "")
	assert.Equal(t, ExitErrorResult, code, stderr)
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	require.Len(t, lines, 3, stdout)
	for i, file := range []string{approved, rejected} {
		assert.True(t, strings.HasPrefix(lines[i], "FAIL "+file+`: history calls tool "fixture_approve"; this build's registry has: `), lines[i])
		assert.Contains(t, lines[i], "add, echo")
	}
	assert.Equal(t, "PASS "+success, lines[2])
	for name, text := range map[string]string{"stdout": stdout, "stderr": stderr} {
		assert.NotContains(t, text, "TMPRL1100", name)
		assert.NotContains(t, text, "panic", name)
		assert.NotContains(t, text, ".go:", name, "a stack trace")
	}
	assert.Empty(t, stderr, "one-shot commands log warnings only")
}

// TestReplayWithoutTheKeyIsOneLine: a history whose payloads are encrypted with key "2026-12"
// fails without --codec-key, and with a key file of another key, with one line naming the key ID
// and --codec-key (not the SDK's TMPRL1100, which reads like non-determinism), and passes with a
// key file that holds the key.
func TestReplayWithoutTheKeyIsOneLine(t *testing.T) {
	dir := t.TempDir()
	keyFile := func(id string) string {
		key := make([]byte, 32)
		_, err := rand.Read(key)
		require.NoError(t, err)
		path := filepath.Join(dir, id+".keys")
		require.NoError(t, os.WriteFile(path, []byte(id+" "+base64.StdEncoding.EncodeToString(key)+"\n"), 0o600))
		return path
	}
	keys, other := keyFile("2026-12"), keyFile("2027-01")
	ring, err := codec.LoadKeyring(keys, nil)
	require.NoError(t, err)
	f, err := os.Open(filepath.Join(histories, "success.json"))
	require.NoError(t, err)
	h, err := client.HistoryFromJSON(f, client.HistoryJSONOptions{})
	require.NoError(t, f.Close())
	require.NoError(t, err)
	_, err = fixtures.EncryptHistory(h, codec.New(ring))
	require.NoError(t, err)
	data, err := protojson.Marshal(h)
	require.NoError(t, err)
	encrypted := filepath.Join(dir, "encrypted.json")
	require.NoError(t, os.WriteFile(encrypted, data, 0o600))

	for name, args := range map[string][]string{
		"no key":    {"replay", encrypted},
		"other key": {"replay", "--codec-key", other, encrypted},
	} {
		t.Run(name, func(t *testing.T) {
			code, stdout, stderr := runIn(args, nil, "")
			assert.Equal(t, ExitErrorResult, code, stderr)
			assert.Equal(t, "FAIL "+encrypted+`: history holds payloads encrypted with key ID "2026-12", which this command lacks: give --codec-key a key file that holds it`+"\n", stdout)
			assert.NotContains(t, stderr, "TMPRL1100")
			assert.NotContains(t, stderr, "panic")
		})
	}
	code, stdout, stderr := runIn([]string{"replay", "--codec-key", keys, encrypted}, nil, "")
	assert.Equal(t, 0, code, stderr)
	assert.Equal(t, "PASS "+encrypted+"\n", stdout)
}
