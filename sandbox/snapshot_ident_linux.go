package sandbox

import (
	"io/fs"
	"syscall"
	"time"
)

// fileID is what identifies a file's bytes without reading them: a write changes the size or
// the change time (which no user can set).
type fileID struct {
	dev, ino uint64
	size     int64
	modified int64 // ns
	changed  int64 // ns
}

// identify is info's fileID, when the system says.
func identify(info fs.FileInfo) (fileID, bool) {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, false
	}
	return fileID{
		dev:      uint64(st.Dev),
		ino:      uint64(st.Ino),
		size:     st.Size,
		modified: info.ModTime().UnixNano(),
		changed:  time.Unix(int64(st.Ctim.Sec), int64(st.Ctim.Nsec)).UnixNano(),
	}, true
}
