package replay_test

import (
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdklog "go.temporal.io/sdk/log"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

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

// selfScopedRounds is fixtures.RoundWorkflow as an agent that scopes its calls by its own
// workflow ID (as examples/agent does) instead of by its input: the recorded parents ran as
// "round-X" with scope "round-X", so its children's IDs match the recorded ones only when the
// replay runs under the recorded workflow ID.
func selfScopedRounds(r sdkworker.WorkflowRegistry) {
	r.RegisterWorkflowWithOptions(func(ctx workflow.Context, in fixtures.RoundInput) ([][]fixtures.RoundOutcome, error) {
		in.Scope = workflow.GetInfo(ctx).WorkflowExecution.ID
		return fixtures.RoundWorkflow(ctx, in)
	}, workflow.RegisterOptions{Name: fixtures.RoundWorkflowName})
}

// TestFileReplaysAgentHistoriesUnderTheirWorkflowID: an agent history whose calls' IDs derive
// from the agent's own workflow ID replays through File, which runs it under the workflow ID
// the history recorded (the SDK's placeholder ID would make other child starts: TMPRL1100).
func TestFileReplaysAgentHistoriesUnderTheirWorkflowID(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(histories, "rounds", "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	opts := replay.Options{Registry: recordedRegistry(t), Workflows: selfScopedRounds}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			assert.NoError(t, replay.File(f, opts))

			// The same replay under the SDK's default execution fails: the test would catch a
			// File that dropped the recorded workflow ID.
			replayer := sdkworker.NewWorkflowReplayer()
			selfScopedRounds(replayer)
			quiet := sdklog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
			err := replayer.ReplayWorkflowHistoryFromJSONFile(quiet, f)
			assert.ErrorContains(t, err, "TMPRL1100")
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

// TestFileMissingFixtureTools: against the toolbox without the fixtures, every fixture history
// that ran past the tool lookup (an activity, a local activity, an approval's timer) fails with
// a *MissingToolError naming its fixture tool, and one that did not (a validator panic is
// recorded like a lookup failure) still passes.
func TestFileMissingFixtureTools(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(histories, "fixtures", "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	tools, err := toolbox.Tools(toolbox.Config{})
	require.NoError(t, err)
	reg, err := toolcore.NewRegistry(tools...)
	require.NoError(t, err)
	passing := map[string]bool{"validation-failed.json": true}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			err := replay.File(f, replay.Options{Registry: reg})
			if passing[filepath.Base(f)] {
				assert.NoError(t, err)
				return
			}
			var missing *replay.MissingToolError
			require.True(t, errors.As(err, &missing), "got %v", err)
			assert.True(t, strings.HasPrefix(missing.Tool, "fixture_"), missing.Tool)
			assert.Equal(t, reg.Names(), missing.Available)
		})
	}
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
