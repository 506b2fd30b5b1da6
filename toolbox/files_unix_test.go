//go:build unix

package toolbox

import (
	"context"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/toolcore"
)

// A FIFO would block a plain open until a writer comes; read_file refuses it at once.
func TestReadFileRefusesFIFO(t *testing.T) {
	f := newFSFixture(t)
	require.NoError(t, syscall.Mkfifo(filepath.Join(f.root, "pipe"), 0o644))
	reg := newTestRegistry(t, Config{Root: f.root})
	res := run(t, reg, NameReadFile, `{"path":"pipe"}`)
	assert.Equal(t, `read "pipe": not a regular file`, requireError(t, res, toolcore.CodeToolExecutionFailed))
}

// list_dir on a FIFO used to open it without O_NONBLOCK and wait for a writer forever, holding a
// worker slot. The context only bounds the test if that comes back: with the fix the tool
// answers at once with a refusal, without opening the FIFO.
func TestListDirRefusesFIFO(t *testing.T) {
	f := newFSFixture(t)
	require.NoError(t, syscall.Mkfifo(filepath.Join(f.root, "pipe"), 0o644))
	reg := newTestRegistry(t, Config{Root: f.root})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	res := runCtx(t, ctx, reg, NameListDir, `{"path":"pipe"}`, toolcore.ExecuteOptions{})

	assert.Equal(t, `list "pipe": not a directory; use read_file`, requireError(t, res, toolcore.CodeToolExecutionFailed))
}
