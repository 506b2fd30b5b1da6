//go:build unix

package toolbox

import (
	"path/filepath"
	"syscall"
	"testing"

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
