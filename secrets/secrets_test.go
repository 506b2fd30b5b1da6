package secrets_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/secrets"
	"github.com/toolgate/toolgate/toolcore"
)

// The variable of a name is PREFIX + the name upper-cased, '.' and '-' as '_'; nothing without
// a prefix is read.
func TestEnvPrefixMapping(t *testing.T) {
	vars := map[string]string{"TG_API_KEY": "sk-env-value", "TG_GITHUB_APP_PEM": "pem-value", "AWS_SECRET_ACCESS_KEY": "aws-value"}
	lookup := func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
	tests := []struct {
		name         string
		prefix       string
		secret       string
		want         string
		wantNotFound bool
		wantErr      string
	}{
		{name: "lower case", prefix: "TG_", secret: "api_key", want: "sk-env-value"},
		{name: "dots and dashes", prefix: "TG_", secret: "github.app-pem", want: "pem-value"},
		{name: "unset", prefix: "TG_", secret: "other", wantNotFound: true},
		{name: "another prefix's variable", prefix: "TG_", secret: "AWS_SECRET_ACCESS_KEY", wantNotFound: true},
		{name: "no prefix", prefix: "", secret: "AWS_SECRET_ACCESS_KEY", wantErr: "needs a Prefix"},
		{name: "bad prefix", prefix: "TG=", secret: "api_key", wantErr: "must match"},
		{name: "bad name", prefix: "TG_", secret: "a/b", wantErr: "must match"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := secrets.Env{Prefix: tt.prefix, LookupEnv: lookup}.Secret(t.Context(), tt.secret)
			switch {
			case tt.wantNotFound:
				require.ErrorIs(t, err, toolcore.ErrSecretNotFound)
			case tt.wantErr != "":
				require.ErrorContains(t, err, tt.wantErr)
				assert.NotErrorIs(t, err, toolcore.ErrSecretNotFound)
			default:
				require.NoError(t, err)
				assert.Equal(t, tt.want, got)
			}
		})
	}
	assert.Equal(t, "TG_GITHUB_APP_PEM", secrets.Env{Prefix: "TG_"}.Variable("github.app-pem"))
}

// write writes content to dir/name.
func write(t *testing.T, dir, name, content string) {
	t.Helper()
	require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600))
}

// A file's value: one trailing newline trimmed, bounded, regular files only, inside the
// directory only.
func TestDirReadsFiles(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	write(t, outside, "stolen", "outside-value")
	write(t, dir, "api_key", "sk-file-value\n")
	write(t, dir, "crlf", "crlf-value\r\n")
	write(t, dir, "two_lines", "two-lines\n\n")
	write(t, dir, "largest", strings.Repeat("x", toolcore.MaxSecretBytes)+"\n")
	write(t, dir, "too_large", strings.Repeat("x", toolcore.MaxSecretBytes+1))
	require.NoError(t, os.Symlink(filepath.Join(outside, "stolen"), filepath.Join(dir, "absolute_out")))
	require.NoError(t, os.Symlink("../"+filepath.Base(outside)+"/stolen", filepath.Join(dir, "relative_out")))
	require.NoError(t, os.Symlink("../"+filepath.Base(outside)+"/missing", filepath.Join(dir, "dangling_out")))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "sub"), 0o700))
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o600))
	// Kubernetes: key -> ..data/key, ..data -> ..<timestamp> (relative links).
	require.NoError(t, os.Mkdir(filepath.Join(dir, "..2026_12_06_05_00_00.1"), 0o700))
	write(t, filepath.Join(dir, "..2026_12_06_05_00_00.1"), "k8s_token", "k8s-token-value")
	require.NoError(t, os.Symlink("..2026_12_06_05_00_00.1", filepath.Join(dir, "..data")))
	require.NoError(t, os.Symlink("..data/k8s_token", filepath.Join(dir, "k8s_token")))
	src := &secrets.Dir{Path: dir}

	tests := []struct {
		name         string
		secret       string
		want         string
		wantNotFound bool
		wantErr      string
	}{
		{name: "trailing newline trimmed", secret: "api_key", want: "sk-file-value"},
		{name: "CRLF trimmed", secret: "crlf", want: "crlf-value"},
		{name: "one newline only", secret: "two_lines", want: "two-lines\n"},
		{name: "largest value", secret: "largest", want: strings.Repeat("x", toolcore.MaxSecretBytes)},
		{name: "too large", secret: "too_large", wantErr: "larger than 65536 bytes"},
		{name: "missing", secret: "missing", wantNotFound: true},
		{name: "kubernetes links", secret: "k8s_token", want: "k8s-token-value"},
		{name: "absolute link out", secret: "absolute_out", wantErr: "absolute_out"},
		{name: "relative link out", secret: "relative_out", wantErr: "relative_out"},
		{name: "dangling link out", secret: "dangling_out", wantErr: "dangling_out"},
		{name: "dot dot", secret: "..", wantNotFound: true},
		{name: "hidden data dir", secret: "..data", wantNotFound: true},
		{name: "directory", secret: "sub", wantErr: "not a regular file"},
		{name: "fifo", secret: "fifo", wantErr: "not a regular file"},
		{name: "bad name", secret: "../x", wantErr: "must match"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := src.Secret(t.Context(), tt.secret)
			switch {
			case tt.wantNotFound:
				require.ErrorIs(t, err, toolcore.ErrSecretNotFound)
			case tt.wantErr != "":
				require.ErrorContains(t, err, tt.wantErr)
				assert.NotErrorIs(t, err, toolcore.ErrSecretNotFound, "a refused file is not a missing one: a chain stops there")
				assert.NotContains(t, err.Error(), "outside-value")
			default:
				require.NoError(t, err)
				assert.Equal(t, tt.want, got)
			}
		})
	}

	_, err := (&secrets.Dir{Path: filepath.Join(dir, "nonexistent")}).Secret(t.Context(), "api_key")
	assert.NotErrorIs(t, err, toolcore.ErrSecretNotFound, "a missing directory is a misconfiguration, not a missing secret")
	_, err = (&secrets.Dir{}).Secret(t.Context(), "api_key")
	assert.ErrorContains(t, err, "needs a Path")
}

// A rotated file is seen by the next read of the same Dir: rewritten in place, replaced by a
// rename, and swapped as Kubernetes does (..data relinked).
func TestDirSeesRotation(t *testing.T) {
	dir := t.TempDir()
	src := &secrets.Dir{Path: dir}
	read := func(name string) string {
		t.Helper()
		v, err := src.Secret(t.Context(), name)
		require.NoError(t, err)
		return v
	}

	write(t, dir, "api_key", "first-value\n")
	assert.Equal(t, "first-value", read("api_key"))
	assert.Equal(t, "first-value", read("api_key"), "cached")

	// Rewritten in place, same size: the modification time says it changed (set explicitly:
	// a coarse file system clock could give both writes the same time).
	write(t, dir, "api_key", "secnd-value\n")
	require.NoError(t, os.Chtimes(filepath.Join(dir, "api_key"), time.Time{}, time.Now().Add(time.Minute)))
	assert.Equal(t, "secnd-value", read("api_key"))

	// Replaced by a rename (another inode).
	write(t, dir, "next", "third-value-longer")
	require.NoError(t, os.Rename(filepath.Join(dir, "next"), filepath.Join(dir, "api_key")))
	assert.Equal(t, "third-value-longer", read("api_key"))

	// Kubernetes' atomic update: a new timestamped directory, ..data relinked to it.
	for i, v := range []string{"k8s-old-value", "k8s-new-value"} {
		ts := filepath.Join(dir, "..ts"+string(rune('0'+i)))
		require.NoError(t, os.Mkdir(ts, 0o700))
		write(t, ts, "token", v)
		require.NoError(t, os.Symlink(filepath.Base(ts), filepath.Join(dir, "..data_tmp")))
		require.NoError(t, os.Rename(filepath.Join(dir, "..data_tmp"), filepath.Join(dir, "..data")))
		if i == 0 {
			require.NoError(t, os.Symlink("..data/token", filepath.Join(dir, "token")))
		}
		assert.Equal(t, v, read("token"))
	}

	// Removed: not found, and not served from the cache.
	require.NoError(t, os.Remove(filepath.Join(dir, "api_key")))
	_, err := src.Secret(t.Context(), "api_key")
	assert.ErrorIs(t, err, toolcore.ErrSecretNotFound)
}

// failing is a source that cannot be reached.
type failing struct{}

func (failing) Secret(_ context.Context, name string) (string, error) {
	return "", errors.New("secret manager unreachable")
}

// The first source that has a name answers; an error other than not found stops the chain.
func TestChainOrder(t *testing.T) {
	first := secrets.Map{"a": "first-a-value"}
	second := secrets.Map{"a": "second-a-value", "b": "second-b-value"}
	tests := []struct {
		name         string
		sources      []toolcore.SecretSource
		secret       string
		want         string
		wantNotFound bool
		wantErr      string
	}{
		{name: "first wins", sources: []toolcore.SecretSource{first, second}, secret: "a", want: "first-a-value"},
		{name: "falls through", sources: []toolcore.SecretSource{first, second}, secret: "b", want: "second-b-value"},
		{name: "order matters", sources: []toolcore.SecretSource{second, first}, secret: "a", want: "second-a-value"},
		{name: "nil skipped", sources: []toolcore.SecretSource{nil, second}, secret: "b", want: "second-b-value"},
		{name: "none has it", sources: []toolcore.SecretSource{first, second}, secret: "c", wantNotFound: true},
		{name: "empty chain", secret: "a", wantNotFound: true},
		{name: "failure stops", sources: []toolcore.SecretSource{first, failing{}, second}, secret: "b", wantErr: "unreachable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := secrets.Chain(tt.sources...).Secret(t.Context(), tt.secret)
			switch {
			case tt.wantNotFound:
				require.ErrorIs(t, err, toolcore.ErrSecretNotFound)
			case tt.wantErr != "":
				require.ErrorContains(t, err, tt.wantErr)
			default:
				require.NoError(t, err)
				assert.Equal(t, tt.want, got)
			}
		})
	}
}

// A directory first, the environment second: what the CLI's --secrets-dir and
// --secrets-env-prefix build; errors name the secret and never hold a value.
func TestDirThenEnv(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "api_key", "file-api-key-value")
	vars := map[string]string{"TG_API_KEY": "env-api-key-value", "TG_OTHER": "env-other-value"}
	src := secrets.Chain(&secrets.Dir{Path: dir}, secrets.Env{Prefix: "TG_", LookupEnv: func(k string) (string, bool) { v, ok := vars[k]; return v, ok }})
	v, err := src.Secret(t.Context(), "api_key")
	require.NoError(t, err)
	assert.Equal(t, "file-api-key-value", v)
	v, err = src.Secret(t.Context(), "other")
	require.NoError(t, err)
	assert.Equal(t, "env-other-value", v)
	_, err = src.Secret(t.Context(), "absent")
	require.ErrorIs(t, err, toolcore.ErrSecretNotFound)
	assert.Contains(t, err.Error(), `"absent"`)

	// Resolved for a tool, a missing one is a model-safe error naming it.
	_, err = toolcore.ResolveSecrets(t.Context(), src, "tool", []string{"api_key", "absent"})
	var se *toolcore.SecretError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, `secret "absent" is not set on the worker`, se.Error())
	assert.NotContains(t, err.Error(), "file-api-key-value")
}

// BenchmarkDirSecret is one read of an unchanged file (open, stat, cached value): what each
// attempt of a tool pays per declared secret.
func BenchmarkDirSecret(b *testing.B) {
	dir := b.TempDir()
	require.NoError(b, os.WriteFile(filepath.Join(dir, "api_key"), []byte("sk-bench-value\n"), 0o600))
	src := &secrets.Dir{Path: dir}
	for b.Loop() {
		if _, err := src.Secret(b.Context(), "api_key"); err != nil {
			b.Fatal(err)
		}
	}
}
