package replay_test

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/internal/fixtures"
	"github.com/toolgate/toolgate/replay"
	"github.com/toolgate/toolgate/toolbox"
	"github.com/toolgate/toolgate/toolcore"
)

const histories = "../testdata/histories"

func recordedRegistry(t *testing.T) *toolcore.Registry {
	t.Helper()
	tools, err := toolbox.Tools(toolbox.Config{})
	require.NoError(t, err)
	reg, err := toolcore.NewRegistry(append(tools, fixtures.Tools()...)...)
	require.NoError(t, err)
	return reg
}

// TestFileReplaysRecordedHistories: every recorded tool-call history replays against the
// registry it was recorded with, the search-attribute setting read from the history.
func TestFileReplaysRecordedHistories(t *testing.T) {
	top, err := filepath.Glob(filepath.Join(histories, "*.json"))
	require.NoError(t, err)
	more, err := filepath.Glob(filepath.Join(histories, "fixtures", "*.json"))
	require.NoError(t, err)
	files := append(top, more...)
	require.NotEmpty(t, files)
	reg := recordedRegistry(t)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			assert.NoError(t, replay.File(f, replay.Options{Registry: reg}))
		})
	}
}

// TestFileMissingTool: a history whose tool the registry lacks fails with one line naming the
// tool and what the registry has, not the SDK's stack trace.
func TestFileMissingTool(t *testing.T) {
	reg, err := toolcore.NewRegistry()
	require.NoError(t, err)
	err = replay.File(filepath.Join(histories, "success.json"), replay.Options{Registry: reg})
	var missing *replay.MissingToolError
	require.True(t, errors.As(err, &missing), "got %v", err)
	assert.NotContains(t, err.Error(), "\n")
	assert.Contains(t, err.Error(), `history calls tool "`)
	assert.Contains(t, err.Error(), "this build's registry has: ")
}

// TestMissingToolErrorBoundsTheList: at most 20 names, then "and N more".
func TestMissingToolErrorBoundsTheList(t *testing.T) {
	var names []string
	for i := range 25 {
		names = append(names, string(rune('a'+i)))
	}
	for _, tc := range []struct {
		names []string
		want  string
	}{
		{nil, `history calls tool "x"; this build's registry has: (no tools)`},
		{[]string{"a", "b", "c"}, `history calls tool "x"; this build's registry has: a, b, c`},
		{names, `history calls tool "x"; this build's registry has: a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p, q, r, s, t and 5 more`},
	} {
		assert.Equal(t, tc.want, (&replay.MissingToolError{Tool: "x", Available: tc.names}).Error())
	}
}
