// Package headstest is the one table of behaviours every sandbox.Heads passes: run by the
// FileHeads' tests (package sandbox) and the SQLHeads' against a real PostgreSQL
// (cmd/toolgate/internal/cluster), so both keep one contract.
package headstest

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/sandbox"
)

// Run runs every behaviour as a subtest, each on the empty Heads fresh returns.
func Run(t *testing.T, fresh func(t *testing.T) sandbox.Heads) {
	tests := []struct {
		name string
		run  func(t *testing.T, h sandbox.Heads)
	}{
		{"MissingHeadIsErrNoWorkspace", testMissing},
		{"SwapFromItsVersionOnly", testSwapFromVersion},
		{"ConcurrentSwapsFromOneVersionOneWins", testConcurrentSwaps},
		{"ListSortedByName", testList},
		{"DeleteThenStartAgain", testDelete},
		{"RefusesASwapThatSkipsAVersion", testSkip},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.run(t, fresh(t)) })
	}
}

// head is version v of workspace name, committed by call.
func head(name string, v int64, call string) sandbox.Head {
	return sandbox.Head{
		Workspace: name,
		Version:   v,
		Manifest:  fmt.Sprintf("%064x", v),
		Prev:      fmt.Sprintf("%064x", v-1),
		Call:      call,
		Record:    json.RawMessage(`{"exitCode":0,"stdout":"ok \u00e9"}`),
		Files:     v,
		Bytes:     10 * v,
		Updated:   time.Date(2026, 12, 6, 10, 0, int(v), 0, time.UTC),
	}
}

func testMissing(t *testing.T, h sandbox.Heads) {
	_, err := h.Get(context.Background(), "run-1")
	require.ErrorIs(t, err, sandbox.ErrNoWorkspace)
}

func testSwapFromVersion(t *testing.T, h sandbox.Heads) {
	ctx := context.Background()
	name := "agent/run 1 é" // any workflow ID
	require.NoError(t, h.Swap(ctx, name, 0, head(name, 1, "call-1")))
	require.ErrorIs(t, h.Swap(ctx, name, 0, head(name, 1, "call-x")), sandbox.ErrConflict, "a second first head")
	require.NoError(t, h.Swap(ctx, name, 1, head(name, 2, "call-2")))
	err := h.Swap(ctx, name, 1, head(name, 2, "call-3"))
	require.ErrorIs(t, err, sandbox.ErrConflict, "a swap from a stale version")
	assert.Contains(t, err.Error(), `"call-2"`, "the conflict names the call that committed")

	got, err := h.Get(ctx, name)
	require.NoError(t, err)
	want := head(name, 2, "call-2")
	assert.True(t, want.Updated.Equal(got.Updated))
	got.Updated = want.Updated
	assert.JSONEq(t, string(want.Record), string(got.Record))
	got.Record = want.Record
	assert.Equal(t, want, got)
}

func testConcurrentSwaps(t *testing.T, h sandbox.Heads) {
	ctx := context.Background()
	name := "race"
	require.NoError(t, h.Swap(ctx, name, 0, head(name, 1, "first")))
	const n = 8
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { errs[i] = h.Swap(ctx, name, 1, head(name, 2, fmt.Sprintf("call-%d", i))) })
	}
	wg.Wait()
	won := -1
	for i, err := range errs {
		if err == nil {
			require.Equal(t, -1, won, "two swaps from version 1 won")
			won = i
			continue
		}
		require.ErrorIs(t, err, sandbox.ErrConflict)
	}
	require.NotEqual(t, -1, won, "no swap won")
	got, err := h.Get(ctx, name)
	require.NoError(t, err)
	assert.Equal(t, fmt.Sprintf("call-%d", won), got.Call)
}

func testList(t *testing.T, h sandbox.Heads) {
	ctx := context.Background()
	got, err := h.List(ctx)
	require.NoError(t, err)
	assert.Empty(t, got)
	for _, name := range []string{"b", "a", "C"} {
		require.NoError(t, h.Swap(ctx, name, 0, head(name, 1, "c-"+name)))
	}
	require.NoError(t, h.Swap(ctx, "a", 1, head("a", 2, "c-a2")))
	got, err = h.List(ctx)
	require.NoError(t, err)
	var names []string
	for _, g := range got {
		names = append(names, fmt.Sprintf("%s@%d", g.Workspace, g.Version))
	}
	assert.Equal(t, []string{"C@1", "a@2", "b@1"}, names)
}

func testDelete(t *testing.T, h sandbox.Heads) {
	ctx := context.Background()
	require.NoError(t, h.Delete(ctx, "never"), "deleting a missing head")
	require.NoError(t, h.Swap(ctx, "w", 0, head("w", 1, "c1")))
	require.NoError(t, h.Delete(ctx, "w"))
	_, err := h.Get(ctx, "w")
	require.ErrorIs(t, err, sandbox.ErrNoWorkspace)
	require.ErrorIs(t, h.Swap(ctx, "w", 1, head("w", 2, "late")), sandbox.ErrConflict, "a swap onto a removed head")
	require.NoError(t, h.Swap(ctx, "w", 0, head("w", 1, "again")))
	got, err := h.Get(ctx, "w")
	require.NoError(t, err)
	assert.Equal(t, "again", got.Call)
}

func testSkip(t *testing.T, h sandbox.Heads) {
	ctx := context.Background()
	err := h.Swap(ctx, "w", 0, head("w", 2, "c"))
	require.Error(t, err)
	assert.NotErrorIs(t, err, sandbox.ErrConflict)
	require.Error(t, h.Swap(ctx, "w", 0, head("other", 1, "c")), "a head of another workspace")
	_, err = h.Get(ctx, "w")
	require.ErrorIs(t, err, sandbox.ErrNoWorkspace)
}
