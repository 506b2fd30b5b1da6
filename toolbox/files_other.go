//go:build !unix

package toolbox

import "os"

// Open flags of the file tools; where there are no FIFOs or device nodes to guard against, the
// type checks before and after opening suffice.
const (
	readOpenFlags = os.O_RDONLY
	listOpenFlags = os.O_RDONLY
)
