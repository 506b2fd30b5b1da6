package browser

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
)

// candidates are the executables tried, in order.
func candidates() []string {
	return []string{"/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"}
}

// Args returns the command line for a headless Chromium with its own profile in userDataDir,
// without sandbox (root), GPU or background networking, followed by extra.
func Args(userDataDir string, extra ...string) []string {
	args := []string{
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-dev-shm-usage", "--user-data-dir=" + userDataDir,
	}
	return append(args, extra...)
}

var (
	ensureOnce sync.Once
	ensurePath string
	ensureErr  error
)

// Ensure returns the path of a Chromium executable, installing Debian's chromium package when
// none is found and this process may (root with apt-get). It installs at most once per process.
func Ensure(ctx context.Context) (string, error) {
	ensureOnce.Do(func() { ensurePath, ensureErr = ensure(ctx) })
	return ensurePath, ensureErr
}

func ensure(ctx context.Context) (string, error) {
	if p, ok := find(candidates()); ok {
		return p, nil
	}
	if os.Geteuid() != 0 {
		return "", errors.New("chromium not found: install Debian's chromium package (apt-get install chromium)")
	}
	if _, err := exec.LookPath("apt-get"); err != nil {
		return "", errors.New("chromium not found and apt-get is missing: install a Chromium at /usr/bin/chromium")
	}
	for _, args := range [][]string{
		{"apt-get", "update", "-q"},
		{"apt-get", "install", "-y", "-q", "--no-install-recommends", "chromium"},
	} {
		cmd := exec.CommandContext(ctx, args[0], args[1:]...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("install chromium: %v: %w\n%s", args, err, tail(out, 2000))
		}
	}
	if p, ok := find(candidates()); ok {
		return p, nil
	}
	return "", errors.New("install chromium: package installed but no executable found")
}

func find(paths []string) (string, bool) {
	for _, p := range paths {
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, true
		}
	}
	return "", false
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}
