//go:build !linux

package sandbox

import (
	"context"
	"fmt"
)

// platformSupported: bubblewrap runs on Linux only.
func platformSupported() error {
	return fmt.Errorf("%w: bubblewrap sandboxes run on Linux only", ErrUnavailable)
}

// execute is never reached: NewRunner fails here.
func (r *Runner) execute(ctx context.Context, dir string, argv []string, workdir string, cmd Command, lim Limits, allow map[string]bool) (Output, error) {
	return Output{}, platformSupported()
}

// cgroupV1 is never used here.
type cgroupV1 struct{}

func findCgroupV1() (*cgroupV1, string) { return nil, "not Linux" }
