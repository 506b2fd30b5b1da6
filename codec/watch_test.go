package codec_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/toolgate/toolgate/codec"
)

// keyLine is a key file line for id with every byte b; marker is "" or codec.DecryptOnly.
func keyLine(id string, b byte, marker string) string {
	return strings.TrimSpace(id+" "+base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{b}, codec.KeySize))+" "+marker) + "\n"
}

// watch starts a watcher of path polling every 10 ms, with its log lines observed.
func watch(t *testing.T, path string) (*codec.KeyringWatcher, *observer.ObservedLogs) {
	t.Helper()
	core, logs := observer.New(zap.InfoLevel)
	w, err := codec.WatchKeyring(t.Context(), path, codec.WatchOptions{Interval: 10 * time.Millisecond, Logger: zap.New(core)})
	require.NoError(t, err)
	t.Cleanup(w.Close)
	return w, logs
}

// writeAtomically replaces path's content by a rename, as editors and config tools do.
func writeAtomically(t *testing.T, path, content string) {
	t.Helper()
	tmp := path + ".tmp"
	require.NoError(t, os.WriteFile(tmp, []byte(content), 0o600))
	require.NoError(t, os.Rename(tmp, path))
}

func keyIDs(r *codec.Keyring) string {
	var b strings.Builder
	for _, k := range r.Keys() {
		fmt.Fprintf(&b, "%s:%s ", k.ID, k.Role)
	}
	return strings.TrimSpace(b.String())
}

// TestWatcherTwoPhaseRotation rotates a key file in two phases under a watcher: phase 1 adds
// the new key decrypt-only (the old one still encrypts), phase 2 lets it encrypt; payloads of
// either key decode throughout, and each reload is logged with key IDs only.
func TestWatcherTwoPhaseRotation(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys.txt")
	require.NoError(t, os.WriteFile(path, []byte(keyLine("old", 1, "")), 0o600))
	w, logs := watch(t, path)
	c := codec.New(w)
	plain, err := converter.GetDefaultDataConverter().ToPayload("x")
	require.NoError(t, err)
	encOld, err := c.Encode([]*commonpb.Payload{plain})
	require.NoError(t, err)

	writeAtomically(t, path, keyLine("new", 2, codec.DecryptOnly)+keyLine("old", 1, ""))
	require.Eventually(t, func() bool { return w.Keyring().Has("new") }, time.Minute, 10*time.Millisecond)
	assert.Equal(t, "new:decrypt old:encrypt", keyIDs(w.Keyring()), "phase 1: new decrypts only")
	enc, err := c.Encode([]*commonpb.Payload{plain})
	require.NoError(t, err)
	assert.Equal(t, "old", string(enc[0].GetMetadata()[codec.MetadataKeyID]))

	writeAtomically(t, path, keyLine("new", 2, "")+keyLine("old", 1, ""))
	require.Eventually(t, func() bool { return w.Keyring().CurrentKeyID() == "new" }, time.Minute, 10*time.Millisecond)
	encNew, err := c.Encode([]*commonpb.Payload{plain})
	require.NoError(t, err)
	assert.Equal(t, "new", string(encNew[0].GetMetadata()[codec.MetadataKeyID]))
	_, err = c.Decode(append(encOld, encNew...))
	require.NoError(t, err, "both keys decrypt after phase 2")

	reloads := logs.FilterMessage("codec keys reloaded").All()
	require.Len(t, reloads, 2)
	assert.Equal(t, []any{"new", "old"}, reloads[1].ContextMap()["keyIds"])
	assert.Empty(t, logs.FilterMessageSnippet("without having been held decrypt-only").All(), "a two-phase rotation gets no warning")
	for _, e := range logs.All() {
		assert.NotContains(t, fmt.Sprint(e.ContextMap()), base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{2}, codec.KeySize))[:20])
	}
}

// TestWatcherKeepsKeysOnBadFiles: an unparsable file, an empty one, one that drops the key
// encrypting now, and a missing one each leave the keys in force and are logged once; the next
// good file is taken.
func TestWatcherKeepsKeysOnBadFiles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys.txt")
	require.NoError(t, os.WriteFile(path, []byte(keyLine("k1", 1, "")), 0o600))
	w, logs := watch(t, path)
	tests := []struct {
		name    string
		give    string
		wantErr string
	}{
		{name: "unparsable", give: "k2 not-base64!\n", wantErr: "not standard base64"},
		{name: "empty", give: "\n", wantErr: "no key"},
		{name: "all decrypt-only", give: keyLine("k1", 1, codec.DecryptOnly), wantErr: "one must encrypt"},
		{name: "drops the encrypting key", give: keyLine("k2", 2, ""), wantErr: `drop key "k1", which encrypts now`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			writeAtomically(t, path, tt.give)
			_, err := w.Reload()
			require.ErrorContains(t, err, tt.wantErr)
			assert.Equal(t, "k1:encrypt", keyIDs(w.Keyring()))
			require.Eventually(t, func() bool { return logs.FilterMessage("codec keys not reloaded").FilterFieldKey("error").Len() > 0 }, time.Minute, 10*time.Millisecond)
		})
	}
	require.NoError(t, os.Remove(path))
	_, err := w.Reload()
	require.ErrorContains(t, err, "no such file")
	assert.Equal(t, "k1:encrypt", keyIDs(w.Keyring()))

	writeAtomically(t, path, keyLine("k2", 2, "")+keyLine("k1", 1, ""))
	require.Eventually(t, func() bool { return w.Keyring().CurrentKeyID() == "k2" }, time.Minute, 10*time.Millisecond)
	assert.Equal(t, 1, logs.FilterMessageSnippet("without having been held decrypt-only").Len(), "a one-phase rotation is warned about")
}

// TestWatcherFollowsSecretSymlinkSwap swaps the key file as the kubelet updates a mounted
// Secret: keys.txt -> ..data/keys.txt, ..data -> a new timestamped directory.
func TestWatcherFollowsSecretSymlinkSwap(t *testing.T) {
	dir := t.TempDir()
	v1, v2 := filepath.Join(dir, "..2026_01"), filepath.Join(dir, "..2026_02")
	require.NoError(t, os.Mkdir(v1, 0o700))
	require.NoError(t, os.Mkdir(v2, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(v1, "keys.txt"), []byte(keyLine("k1", 1, "")), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(v2, "keys.txt"), []byte(keyLine("k2", 2, codec.DecryptOnly)+keyLine("k1", 1, "")), 0o600))
	require.NoError(t, os.Symlink("..2026_01", filepath.Join(dir, "..data")))
	require.NoError(t, os.Symlink("..data/keys.txt", filepath.Join(dir, "keys.txt")))
	w, _ := watch(t, filepath.Join(dir, "keys.txt"))
	require.Equal(t, "k1:encrypt", keyIDs(w.Keyring()))

	require.NoError(t, os.Symlink("..2026_02", filepath.Join(dir, "..data_tmp")))
	require.NoError(t, os.Rename(filepath.Join(dir, "..data_tmp"), filepath.Join(dir, "..data")))
	require.Eventually(t, func() bool { return w.Keyring().Has("k2") }, time.Minute, 10*time.Millisecond)
	assert.Equal(t, "k2:decrypt k1:encrypt", keyIDs(w.Keyring()))
}

// TestDecodeRereadsTheFileForAMissingKey: a payload naming a key the watcher has not polled yet
// makes it read the file at once.
func TestDecodeRereadsTheFileForAMissingKey(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys.txt")
	require.NoError(t, os.WriteFile(path, []byte(keyLine("k1", 1, "")), 0o600))
	w, err := codec.WatchKeyring(t.Context(), path, codec.WatchOptions{Interval: time.Hour})
	require.NoError(t, err)
	defer w.Close()
	sender := codec.New(keyring(t, key("k2", 2)))
	plain, err := converter.GetDefaultDataConverter().ToPayload("x")
	require.NoError(t, err)
	enc, err := sender.Encode([]*commonpb.Payload{plain})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, []byte(keyLine("k1", 1, "")+keyLine("k2", 2, "")), 0o600))
	_, err = codec.New(w).Decode(enc)
	require.NoError(t, err)
}

// TestDataConverterMissingKeyByContext: in workflow code a missing key panics with
// *codec.WaitingForKeyError (a workflow task failure, retried); outside it is a
// *codec.KeyNotHeldError.
func TestDataConverterMissingKeyByContext(t *testing.T) {
	sender := codec.DataConverter(keyring(t, key("k2", 2)))
	p, err := sender.ToPayload("x")
	require.NoError(t, err)
	dc := codec.DataConverter(keyring(t, key("k1", 1)))

	var s string
	err = dc.FromPayload(p, &s)
	missing, ok := errors.AsType[*codec.KeyNotHeldError](err)
	require.True(t, ok, "%v", err)
	assert.Equal(t, "k2", missing.KeyID)

	inWorkflow := dc.(workflow.ContextAware).WithWorkflowContext(nil)
	var panicked any
	func() {
		defer func() { panicked = recover() }()
		_ = inWorkflow.FromPayloads(&commonpb.Payloads{Payloads: []*commonpb.Payload{p}}, &s)
	}()
	waiting, ok := panicked.(*codec.WaitingForKeyError)
	require.True(t, ok, "panic %v", panicked)
	assert.Contains(t, waiting.Error(), `waiting for codec key "k2"`)
}

// TestWatcherConcurrentUse decodes while the file changes (run with -race).
func TestWatcherConcurrentUse(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys.txt")
	require.NoError(t, os.WriteFile(path, []byte(keyLine("k1", 1, "")), 0o600))
	w, _ := watch(t, path)
	dc := codec.DataConverter(w)
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for ctx.Err() == nil {
				p, err := dc.ToPayload("x")
				if !assert.NoError(t, err) {
					return
				}
				var s string
				if !assert.NoError(t, dc.FromPayload(p, &s)) {
					return
				}
			}
		})
	}
	writeAtomically(t, path, keyLine("k2", 2, codec.DecryptOnly)+keyLine("k1", 1, ""))
	require.Eventually(t, func() bool { return w.Keyring().Has("k2") }, time.Minute, 10*time.Millisecond)
	writeAtomically(t, path, keyLine("k2", 2, "")+keyLine("k1", 1, ""))
	require.Eventually(t, func() bool { return w.Keyring().CurrentKeyID() == "k2" }, time.Minute, 10*time.Millisecond)
	cancel()
	wg.Wait()
}

// TestActivityDecodeWaitsForTheKey: in an activity, a payload encrypted with a key the keyring
// lacks is decoded once the key file gains the key, instead of failing the attempt.
func TestActivityDecodeWaitsForTheKey(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys.txt")
	require.NoError(t, os.WriteFile(path, []byte(keyLine("k1", 1, "")), 0o600))
	w, _ := watch(t, path)
	sender := codec.DataConverter(keyring(t, key("k2", 2)))
	p, err := sender.ToPayload("late key")
	require.NoError(t, err)

	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	env.RegisterActivityWithOptions(func(ctx context.Context) (string, error) {
		go writeAtomically(t, path, keyLine("k2", 2, codec.DecryptOnly)+keyLine("k1", 1, ""))
		var got string
		err := codec.DataConverter(w).(workflow.ContextAware).WithContext(ctx).FromPayload(p, &got)
		return got, err
	}, activity.RegisterOptions{Name: "decode"})
	val, err := env.ExecuteActivity("decode")
	require.NoError(t, err)
	var got string
	require.NoError(t, val.Get(&got))
	assert.Equal(t, "late key", got)
}
