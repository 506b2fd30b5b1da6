package e2e

import (
	"bufio"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/internal/devtest"
	"github.com/toolgate/toolgate/internal/testbin"
)

// cliCall is a `toolgate call` process against the shared dev server, its stderr read line by
// line as it runs.
type cliCall struct {
	cmd    *exec.Cmd
	stdout strings.Builder
	lines  chan string
	all    []string // every stderr line read so far
}

// startCLICall starts `toolgate call args...` against devtest's server; the process is killed at
// the test's end.
func startCLICall(t *testing.T, args ...string) *cliCall {
	t.Helper()
	bin, err := testbin.Toolgate()
	require.NoError(t, err)
	srv := devtest.Server(t)
	c := &cliCall{lines: make(chan string, 64)}
	c.cmd = exec.Command(bin, append(append([]string{"call"}, args...),
		"--address", srv.FrontendAddress(), "--namespace", srv.Namespace())...)
	c.cmd.Env = testbin.ChildEnv()
	c.cmd.Stdout = &c.stdout
	stderr, err := c.cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, c.cmd.Start())
	t.Cleanup(func() { _ = c.cmd.Process.Kill() })
	go func() {
		defer close(c.lines)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
	}()
	return c
}

// waitLine returns the first stderr line containing substr; the test fails (what: the line it
// wanted) when the process ends or testTimeout passes first.
func (c *cliCall) waitLine(t *testing.T, substr, what string) string {
	t.Helper()
	for {
		select {
		case line, ok := <-c.lines:
			require.True(t, ok, "toolgate call ended without %s: %s", what, c.text())
			c.all = append(c.all, line)
			if strings.Contains(line, substr) {
				return line
			}
		case <-time.After(testTimeout):
			require.FailNow(t, "toolgate call printed no "+what, c.text())
		}
	}
}

// wait reads the rest of stderr and returns the process's exit.
func (c *cliCall) wait() error {
	for line := range c.lines {
		c.all = append(c.all, line)
	}
	return c.cmd.Wait()
}

// text is every stderr line read so far.
func (c *cliCall) text() string { return strings.Join(c.all, "\n") }
