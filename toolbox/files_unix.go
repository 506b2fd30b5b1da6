//go:build unix

package toolbox

import (
	"os"
	"syscall"
)

// Open flags of the file tools. O_NONBLOCK: opening a FIFO never waits for a writer.
// O_DIRECTORY: the kernel refuses a non-directory before opening it, so list_dir never opens a
// device or a FIFO, even one swapped in after the type check.
const (
	readOpenFlags = os.O_RDONLY | syscall.O_NONBLOCK
	listOpenFlags = os.O_RDONLY | syscall.O_NONBLOCK | syscall.O_DIRECTORY
)
