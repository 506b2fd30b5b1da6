package sandbox

import (
	"context"
	"os/exec"
	"testing"
)

// BenchmarkExecTrue measures the start latency of a sandboxed `true` (prlimit, bwrap, fresh
// namespaces, the whole tree waited for); BenchmarkOSExecTrue the same command through a plain
// os/exec. docs/BENCHMARKS.md ("Sandbox") records the figures.
func BenchmarkExecTrue(b *testing.B) {
	r := newTestRunner(b)
	dir := newWorkspace(b, r)
	ctx := context.Background()
	for b.Loop() {
		out, err := r.Run(ctx, dir, Command{Argv: []string{"true"}})
		if err != nil || out.ExitCode != 0 {
			b.Fatalf("exec true: %+v, %v", out, err)
		}
	}
}

func BenchmarkOSExecTrue(b *testing.B) {
	for b.Loop() {
		if err := exec.Command("true").Run(); err != nil {
			b.Fatal(err)
		}
	}
}
