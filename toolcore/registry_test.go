package toolcore_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/toolcore"
)

// namedTool defines a trivial tool called name.
func namedTool(t testing.TB, name string) toolcore.Tool {
	t.Helper()
	return toolcore.MustDefine(toolcore.Definition[emptyArgs]{
		Name:        name,
		Description: "Tool " + name + ".",
		Validate:    func(toolcore.Arguments) toolcore.Decision[emptyArgs] { return toolcore.Accept(emptyArgs{}) },
		Execute:     func(context.Context, emptyArgs) (any, error) { return name, nil },
	})
}

func TestRegisterMany(t *testing.T) {
	a, b, c := namedTool(t, "a"), namedTool(t, "b"), namedTool(t, "c")
	tests := []struct {
		name      string
		batch     []toolcore.Tool
		wantCode  toolcore.ContractErrorCode // 0: success
		wantMsg   string
		wantNames []string
	}{
		{name: "empty batch", batch: nil, wantNames: []string{"a"}},
		{name: "new tools", batch: []toolcore.Tool{c, b}, wantNames: []string{"a", "b", "c"}},
		{name: "zero Tool", batch: []toolcore.Tool{b, {}}, wantCode: toolcore.CodeInvalidToolBatch, wantMsg: "batch entry 1 is the zero Tool", wantNames: []string{"a"}},
		{name: "duplicate in batch", batch: []toolcore.Tool{b, c, b}, wantCode: toolcore.CodeDuplicateToolName, wantMsg: `tool "b" appears twice in the batch (entries 0 and 2)`, wantNames: []string{"a"}},
		{name: "duplicate of registered", batch: []toolcore.Tool{b, a}, wantCode: toolcore.CodeDuplicateToolName, wantMsg: `tool "a" is already registered`, wantNames: []string{"a"}},
		{name: "zero Tool before a duplicate", batch: []toolcore.Tool{{}, a}, wantCode: toolcore.CodeInvalidToolBatch, wantNames: []string{"a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := contractRegistry(t, a)

			err := r.RegisterMany(tt.batch...)

			if tt.wantCode == 0 {
				require.NoError(t, err)
			} else {
				var ce *toolcore.ContractError
				require.ErrorAs(t, err, &ce)
				assert.Equal(t, tt.wantCode, ce.Code)
				assert.Contains(t, ce.Message, tt.wantMsg)
			}
			assert.Equal(t, tt.wantNames, r.Names())
			assert.Equal(t, len(tt.wantNames), r.Len())
		})
	}
}

func TestRegisterManySnapshotsTheBatch(t *testing.T) {
	batch := []toolcore.Tool{namedTool(t, "a")}
	r := contractRegistry(t, batch...)

	batch[0] = namedTool(t, "b")

	got, ok := r.Get("a")
	require.True(t, ok)
	assert.Equal(t, "a", got.Name())
	assert.Equal(t, []string{"a"}, r.Names())
}

func TestNewRegistryRejectsABadBatch(t *testing.T) {
	r, err := toolcore.NewRegistry(namedTool(t, "a"), namedTool(t, "a"))

	var ce *toolcore.ContractError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, toolcore.CodeDuplicateToolName, ce.Code)
	assert.Nil(t, r)
}

func TestRegisterOne(t *testing.T) {
	r := contractRegistry(t)

	require.NoError(t, r.Register(namedTool(t, "a")))
	err := r.Register(namedTool(t, "a"))

	var ce *toolcore.ContractError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, toolcore.CodeDuplicateToolName, ce.Code)
	assert.Equal(t, 1, r.Len())
}

func TestNamesReturnsASortedCopy(t *testing.T) {
	r := contractRegistry(t, namedTool(t, "b"), namedTool(t, "C"), namedTool(t, "a"))

	names := r.Names()
	names[0] = "mutated"

	assert.Equal(t, []string{"C", "a", "b"}, r.Names(), "byte order, unaffected by the caller's copy")
}

func TestSnapshotIsIndependentBothWays(t *testing.T) {
	r := contractRegistry(t, namedTool(t, "a"))
	snap := r.Snapshot()

	require.NoError(t, r.Register(namedTool(t, "b")))
	require.NoError(t, snap.Register(namedTool(t, "c")))

	assert.Equal(t, []string{"a", "b"}, r.Names())
	assert.Equal(t, []string{"a", "c"}, snap.Names())
	fromR, _ := r.Get("a")
	fromSnap, _ := snap.Get("a")
	assert.Equal(t, fromR, fromSnap, "the immutable tools are shared")
}

func TestZeroAndNilRegistry(t *testing.T) {
	var zero toolcore.Registry
	var nilRegistry *toolcore.Registry

	require.NoError(t, zero.Register(namedTool(t, "a")))
	_, found := nilRegistry.Get("a")

	assert.Equal(t, []string{"a"}, zero.Names())
	assert.False(t, found)
	assert.Equal(t, []string{}, nilRegistry.Names())
	assert.Equal(t, 0, nilRegistry.Len())
	assert.Equal(t, 0, nilRegistry.Snapshot().Len())
}

func TestRegistryConcurrentUse(t *testing.T) {
	r := contractRegistry(t)
	const writers = 16
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() {
			assert.NoError(t, r.RegisterMany(namedTool(t, fmt.Sprintf("w%02d-a", i)), namedTool(t, fmt.Sprintf("w%02d-b", i))))
		})
		wg.Go(func() {
			for _, name := range r.Names() {
				_, ok := r.Get(name)
				assert.True(t, ok, "a listed name is registered")
			}
			s := r.Snapshot()
			assert.Equal(t, 0, s.Len()%2, "batches land whole")
		})
	}
	wg.Wait()

	assert.Equal(t, 2*writers, r.Len())
}
