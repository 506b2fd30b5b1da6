package devserver

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// The data directory holds every call's arguments and results: a new one (and its missing
// parents) is private to the owner.
func TestDataDirIsCreatedPrivate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "share", "toolgate")
	core, logs := observer.New(zapcore.WarnLevel)

	require.NoError(t, prepareDataDir(dir, zap.New(core)))

	for _, d := range []string{dir, filepath.Dir(dir)} {
		fi, err := os.Stat(d)
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o700), fi.Mode().Perm(), d)
	}
	assert.Zero(t, logs.Len())
}

// An existing directory is the user's choice and keeps its mode; if others may enter it, the
// operator is told how to close it.
func TestDataDirExistingOpenIsReported(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.Chmod(dir, 0o755))
	core, logs := observer.New(zapcore.WarnLevel)

	require.NoError(t, prepareDataDir(dir, zap.New(core)))

	fi, err := os.Stat(dir)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o755), fi.Mode().Perm(), "left as the user made it")
	require.Equal(t, 1, logs.Len())
	assert.Equal(t, "chmod 700 "+dir, logs.All()[0].ContextMap()["fix"])
}

// An in-memory server keeps visibility in a database of its own, named after its main store.
func TestInMemoryVisibilityIsApart(t *testing.T) {
	st, err := openSQLite(Options{})
	require.NoError(t, err)
	require.NotNil(t, st.visibility)
	assert.Equal(t, st.main.DatabaseName+"-visibility", st.visibility.DatabaseName)
	assert.Equal(t, "memory", st.visibility.ConnectAttributes["mode"])

	other, err := openSQLite(Options{})
	require.NoError(t, err)
	assert.NotEqual(t, st.main.DatabaseName, other.main.DatabaseName, "unique per server")
}
