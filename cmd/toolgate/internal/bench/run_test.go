package bench

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestRotated(t *testing.T) {
	subjects := []subject{{name: "a"}, {name: "b"}, {name: "c"}}
	names := func(ss []subject) string {
		var s string
		for _, x := range ss {
			s += x.name
		}
		return s
	}
	tests := []struct {
		round int
		want  string
	}{{0, "abc"}, {1, "bca"}, {2, "cab"}, {3, "abc"}}
	for _, tt := range tests {
		assert.Equal(t, tt.want, names(rotated(subjects, tt.round)), "round %d", tt.round)
	}
	assert.Equal(t, "abc", names(subjects), "rotated leaves its input alone")
}

func TestParallel(t *testing.T) {
	var mu sync.Mutex
	seen := map[int]bool{}
	err := parallel(context.Background(), 100, func(_ context.Context, i int) error {
		mu.Lock()
		defer mu.Unlock()
		seen[i] = true
		return nil
	})
	assert.NoError(t, err)
	assert.Len(t, seen, 100)
}

func TestParallelFirstErrorCancels(t *testing.T) {
	boom := errors.New("boom")
	err := parallel(context.Background(), 1000, func(ctx context.Context, i int) error {
		if i == 0 {
			return boom
		}
		<-ctx.Done() // every other call waits for the cancel the first error causes
		return context.Cause(ctx)
	})
	assert.ErrorIs(t, err, boom)
}
