//go:build !unix

package sandbox

import "io/fs"

// Open flags of the host side: none beyond os.Root's own checks on systems without them.
const (
	oNoFollow  = 0
	oNonBlock  = 0
	oDirectory = 0
)

// fileOwner is not known on this system.
func fileOwner(fs.FileInfo) (uid, gid int, ok bool) { return 0, 0, false }

// links is 1 on this system (not known).
func links(fs.FileInfo) uint64 { return 1 }
