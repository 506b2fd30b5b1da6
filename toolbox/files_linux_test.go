package toolbox

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/toolcore"
)

// Opening a device node can have effects of its own (a tape rewinds, a modem dials), so the file
// tools check the type before they open anything. The node here has a character major no
// driver can own (above 511), so opening it always fails with ENXIO: a tool that opens before
// checking reports that error instead of the type refusal.
func TestFileToolsRefuseDeviceNodesBeforeOpening(t *testing.T) {
	f := newFSFixture(t)
	node := filepath.Join(f.root, "dev")
	const major, minor = 4000, 1
	err := syscall.Mknod(node, syscall.S_IFCHR|0o644, major<<8|minor)
	if errors.Is(err, syscall.EPERM) {
		t.Skip("mknod needs CAP_MKNOD, which this environment lacks")
	}
	require.NoError(t, err)
	_, err = os.Open(node)
	require.ErrorIs(t, err, syscall.ENXIO, "the fixture: opening the node fails")
	reg := newTestRegistry(t, Config{Root: f.root})

	read := run(t, reg, NameReadFile, `{"path":"dev"}`)
	list := run(t, reg, NameListDir, `{"path":"dev"}`)

	assert.Equal(t, `read "dev": not a regular file`, requireError(t, read, toolcore.CodeToolExecutionFailed))
	assert.Equal(t, `list "dev": not a directory; use read_file`, requireError(t, list, toolcore.CodeToolExecutionFailed))
}
