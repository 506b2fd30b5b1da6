package policy_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/policy"
)

func TestPolicyWatchReloadsValidKeepsOnInvalid(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.cedar")
	write := func(text string, mod time.Time) {
		require.NoError(t, os.WriteFile(path, []byte(text), 0o600))
		require.NoError(t, os.Chtimes(path, mod, mod))
	}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	write(`permit (principal, action, resource);`, base)
	first, err := policy.Load(path)
	require.NoError(t, err)
	src := policy.NewSource(first, false)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go src.Watch(ctx, path, 5*time.Millisecond, nil)

	write(doneWhen, base.Add(time.Second))
	want := mustParse(t, doneWhen).Hash()
	require.Eventually(t, func() bool { return src.Current().Hash() == want }, 10*time.Second, 5*time.Millisecond)

	write(`forbid (principal,`, base.Add(2*time.Second))
	write(`@id("x") permit (principal, action, resource);`, base.Add(3*time.Second))
	third := mustParse(t, `@id("x") permit (principal, action, resource);`).Hash()
	require.Eventually(t, func() bool { return src.Current().Hash() == third }, 10*time.Second, 5*time.Millisecond)
}

func TestPolicyWatchKeepsSetOnInvalidChange(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.cedar")
	require.NoError(t, os.WriteFile(path, []byte(doneWhen), 0o600))
	set, err := policy.Load(path)
	require.NoError(t, err)
	src := policy.NewSource(set, false)
	// One poll of an invalid file, run synchronously through a canceled-after-change watcher.
	require.NoError(t, os.WriteFile(path, []byte("forbid (principal,"), 0o600))
	require.NoError(t, os.Chtimes(path, time.Now().Add(time.Hour), time.Now().Add(time.Hour)))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	logs := &recordingHandler{seen: make(chan string, 16)}
	go func() { src.Watch(ctx, path, time.Millisecond, newLogger(logs)); close(done) }()
	require.Equal(t, "policy file changed but is invalid; keeping the policy set in force", <-logs.seen)
	cancel()
	<-done
	assert.Equal(t, set.Hash(), src.Current().Hash())
}

func TestPolicyLoadRefusesLargeFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.cedar")
	require.NoError(t, os.WriteFile(path, make([]byte, policy.MaxFileBytes+1), 0o600))
	_, err := policy.Load(path)
	assert.ErrorContains(t, err, "larger than")
	_, err = policy.Load(filepath.Join(t.TempDir(), "missing.cedar"))
	assert.ErrorIs(t, err, os.ErrNotExist)
}
