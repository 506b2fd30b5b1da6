package bench

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestInProcess(t *testing.T) {
	ip, err := inProcess(context.Background(), 5*time.Millisecond)
	require.NoError(t, err)
	assert.Positive(t, ip.Direct.Iterations)
	assert.Positive(t, ip.Execute.Iterations)
	assert.Positive(t, ip.Execute.NsPerCall)
	assert.Positive(t, ip.Execute.AllocsPerCall, "Execute allocates (its goroutine, the result)")
	assert.Greater(t, ip.Execute.NsPerCall, ip.Direct.NsPerCall)
	assert.Positive(t, ip.Ratio)
}

func TestMeasureStopsOnError(t *testing.T) {
	boom := errors.New("boom")
	calls := 0
	_, err := measure(func() error {
		calls++
		if calls == 3 {
			return boom
		}
		return nil
	}, time.Second)
	assert.ErrorIs(t, err, boom)
	assert.Equal(t, 3, calls)
}

func TestInProcessCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := inProcess(ctx, time.Millisecond)
	assert.ErrorIs(t, err, context.Canceled, "toolcore.Execute returns the cancellation")
}

// BenchmarkInProcess is the in-process phase as a Go benchmark:
//
//	go test -run '^$' -bench InProcess -benchmem -count 6 ./cmd/toolgate/internal/bench
func BenchmarkInProcess(b *testing.B) {
	direct, execute, err := InProcessFuncs(context.Background())
	require.NoError(b, err)
	for _, bb := range []struct {
		name string
		fn   func() error
	}{{"direct", direct}, {"Execute", execute}} {
		b.Run(bb.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := bb.fn(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
