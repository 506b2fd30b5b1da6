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

// BenchmarkCancelSleep measures how long Run takes to return after its context is canceled
// while `sleep 600 & sleep 600` runs: the sandbox's init killed, its PID namespace emptied and
// every process reaped.
func BenchmarkCancelSleep(b *testing.B) {
	r := newTestRunner(b)
	dir := newWorkspace(b, r)
	mark := marker(b)
	for range b.N {
		b.StopTimer()
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			_, err := r.Run(ctx, dir, Command{Shell: "sleep 600 & sleep 600", Env: mark})
			done <- err
		}()
		waitFor(b, func() bool { return len(markedProcesses(b, mark, "sleep")) == 2 })
		b.StartTimer()
		cancel()
		if err := <-done; err != context.Canceled {
			b.Fatalf("canceled run: %v", err)
		}
	}
}
