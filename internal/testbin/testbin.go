// Package testbin gives end-to-end tests the binaries they run as real processes.
//
// # One link per test run
//
// Linking cmd/toolgate (it embeds the Temporal server) costs minutes of CPU and ~2.6 GB of memory,
// and `go build -o` output is not cached. `make test` therefore builds it once and names it in
// $TOOLGATE_BIN; every test package reuses that file. Without the variable (a plain `go test`), the
// first caller in a test process builds it into a temporary directory.
package testbin

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// EnvToolgate names a prebuilt toolgate binary.
const EnvToolgate = "TOOLGATE_BIN"

// buildTimeout bounds one link on a loaded 2-core machine.
const buildTimeout = 15 * time.Minute

var toolgate struct {
	once sync.Once
	path string
	err  error
}

// built holds the directories Build made; Cleanup removes them.
var built struct {
	mu   sync.Mutex
	dirs []string
}

// Cleanup removes the binaries Build made in this process; call it from TestMain after m.Run.
func Cleanup() {
	built.mu.Lock()
	defer built.mu.Unlock()
	for _, d := range built.dirs {
		_ = os.RemoveAll(d)
	}
	built.dirs = nil
}

// Toolgate returns the path of a toolgate binary: $TOOLGATE_BIN when set, else one built from
// this module's ./cmd/toolgate, once per process.
func Toolgate() (string, error) {
	toolgate.once.Do(func() {
		if p := os.Getenv(EnvToolgate); p != "" {
			toolgate.path, toolgate.err = prebuilt(p)
			return
		}
		toolgate.path, toolgate.err = Build("./cmd/toolgate", "toolgate")
	})
	return toolgate.path, toolgate.err
}

func prebuilt(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", fmt.Errorf("%s: %w", EnvToolgate, err)
	}
	st, err := os.Stat(abs)
	if err != nil {
		return "", fmt.Errorf("%s: %w", EnvToolgate, err)
	}
	if st.IsDir() || st.Mode()&0o111 == 0 {
		return "", fmt.Errorf("%s: %s is not an executable file", EnvToolgate, abs)
	}
	return abs, nil
}

// Build builds pkg (a path relative to the repository root, e.g. "./cmd/toolgate") into a new
// temporary directory as name and returns the binary's path.
func Build(pkg, name string) (string, error) {
	root, err := Root()
	if err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp("", "toolgate-bin-")
	if err != nil {
		return "", fmt.Errorf("build %s: %w", pkg, err)
	}
	built.mu.Lock()
	built.dirs = append(built.dirs, dir)
	built.mu.Unlock()
	out := filepath.Join(dir, name)
	ctx, cancel := context.WithTimeout(context.Background(), buildTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "build", "-ldflags=-w", "-o", out, pkg) // no DWARF: a cheaper link
	cmd.Dir = root
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %w\n%s", pkg, err, msg)
	}
	return out, nil
}

// Root is the repository's root: the directory of go.work, which ties the library module to
// cmd/toolgate's and internal/uitest's (or of go.mod when run without the workspace).
func Root() (string, error) {
	out, err := exec.Command("go", "env", "GOWORK", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOWORK GOMOD: %w", err)
	}
	for _, f := range strings.Split(string(out), "\n") {
		if f = strings.TrimSpace(f); filepath.IsAbs(f) {
			return filepath.Dir(f), nil
		}
	}
	return "", fmt.Errorf("not inside a module: go env GOWORK GOMOD is %q", out)
}
