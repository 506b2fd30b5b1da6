package doctest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// heavyModules are what a program that imports the library must never reach: the server, the
// Kubernetes and AWS clients it brings, the browser driver and the Web UI of the test suites.
var heavyModules = []string{
	"go.temporal.io/server",
	"k8s.io/",
	"github.com/aws/aws-sdk-go-v2",
	"github.com/chromedp/",
	"github.com/temporalio/ui-server",
}

// maxExtraModules bounds how many modules the library adds to a user's module graph beyond the
// Temporal SDK's own (issue 21's goal).
const maxExtraModules = 30

// consumerModule is what `go mod tidy` and `go list -m all` make of a fresh module with one
// program importing pkgs.
type consumerModule struct {
	modules []string // go list -m all, the consumer itself first
	goLine  string   // the go line tidy left in its go.mod
}

// newConsumer writes a module outside the repository with the go.mod lines requires and a main
// package importing pkgs, tidies it as a user's `go mod tidy` would and lists its module graph.
func newConsumer(t *testing.T, requires string, pkgs ...string) consumerModule {
	t.Helper()
	dir := t.TempDir()
	mod := "module consumer.example\n\ngo 1.26\n\n" + requires
	var src strings.Builder
	src.WriteString("package main\n\nimport (\n")
	for _, p := range pkgs {
		fmt.Fprintf(&src, "\t_ %q\n", p)
	}
	src.WriteString(")\n\nfunc main() {}\n")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte(mod), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.go"), []byte(src.String()), 0o644))

	run := func(args ...string) string {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, goCommand(), args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
		var out, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &stderr
		require.NoError(t, cmd.Run(), "go %s: %s", strings.Join(args, " "), stderr.String())
		return out.String()
	}
	run("mod", "tidy")
	c := consumerModule{modules: strings.Fields(run("list", "-m", "-f", "{{.Path}}", "all"))}
	tidied, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	require.NoError(t, err)
	if m := regexp.MustCompile(`(?m)^go (\S+)$`).FindSubmatch(tidied); m != nil {
		c.goLine = string(m[1])
	}
	return c
}

// TestConsumerModuleStaysLight: a user's module that imports client, worker, workflows, mcp,
// toolbox and codec reaches nothing of the server, the browser suite or the Web UI, has at most
// maxExtraModules modules more than one that imports only the Temporal SDK's client, and keeps
// the go line the SDK itself asks for.
func TestConsumerModuleStaysLight(t *testing.T) {
	root := repoRoot(t)
	goMod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	require.NoError(t, err)
	sdk := regexp.MustCompile(`(?m)^\s*go\.temporal\.io/sdk (v\S+)`).FindSubmatch(goMod)
	require.NotNil(t, sdk, "go.mod requires go.temporal.io/sdk")
	lib := newConsumer(t, fmt.Sprintf("require %s v0.0.0\n\nreplace %s => %s\n", ModulePath, ModulePath, root),
		ModulePath+"/client", ModulePath+"/worker", ModulePath+"/workflows", ModulePath+"/mcp",
		ModulePath+"/toolbox", ModulePath+"/codec")
	// The same SDK version as the library's, so the difference is what the library adds.
	bare := newConsumer(t, fmt.Sprintf("require go.temporal.io/sdk %s\n", sdk[1]), "go.temporal.io/sdk/client", "go.temporal.io/sdk/worker")
	t.Logf("modules: library consumer %d, bare SDK consumer %d; go lines %s and %s",
		len(lib.modules), len(bare.modules), lib.goLine, bare.goLine)

	for _, m := range lib.modules {
		for _, heavy := range heavyModules {
			assert.False(t, strings.HasPrefix(m, heavy), "a library consumer's module graph reaches %s", m)
		}
	}
	assert.LessOrEqual(t, len(lib.modules)-len(bare.modules), maxExtraModules,
		"the library adds %d modules to a user's graph (bound %d)", len(lib.modules)-len(bare.modules), maxExtraModules)
	assert.Equal(t, bare.goLine, lib.goLine, "importing the library raises the user's go line above the SDK's")
}
