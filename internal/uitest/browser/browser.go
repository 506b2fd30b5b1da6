package browser

import (
	"fmt"
	"os"
	"strings"
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

// Find returns the path of an executable Chromium, or an error that names `make setup`, which
// installs Debian's chromium package. It never installs anything itself.
func Find() (string, error) {
	return locate(candidates())
}

func locate(paths []string) (string, error) {
	if p, ok := find(paths); ok {
		return p, nil
	}
	return "", fmt.Errorf("chromium not found (looked for %s): run `make setup`, which installs "+
		"Debian's chromium package", strings.Join(paths, ", "))
}

func find(paths []string) (string, bool) {
	for _, p := range paths {
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, true
		}
	}
	return "", false
}
