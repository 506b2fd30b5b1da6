//go:build unix

package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// reachable says why the user uid (group gid) cannot reach dir, whose parents must let the
// sandbox's user pass (bubblewrap binds the workspace as that user), or nil. A worker that is not
// root runs the sandbox as itself: then nothing is checked.
func reachable(dir string, uid, gid int) error {
	if os.Geteuid() != 0 {
		return nil
	}
	for p := filepath.Dir(dir); ; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		if err != nil {
			return err
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		mode := fi.Mode().Perm()
		pass := mode&0o001 != 0 ||
			(ok && int(st.Uid) == uid && mode&0o100 != 0) ||
			(ok && int(st.Gid) == gid && mode&0o010 != 0)
		if !pass {
			return fmt.Errorf("%w: the sandbox's user (uid %d) cannot pass through %s (mode %s): give the directory's parents o+x (chmod 0711), or choose another directory", ErrDirUnreachable, uid, p, mode)
		}
		if p == filepath.Dir(p) {
			return nil
		}
	}
}
