package workflows_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/toolgate/toolgate/internal/fixtures"
	"github.com/toolgate/toolgate/policy"
	replaypkg "github.com/toolgate/toolgate/replay"
	"github.com/toolgate/toolgate/wire"
	"github.com/toolgate/toolgate/workflows"
)

// invertedPolicy decides every recorded call the other way.
const invertedPolicy = `permit (principal, action, resource);
@id("no-add") forbid (principal, action, resource == Toolgate::Tool::"add") when { context.arguments has left && context.arguments.left < 1000 };
@id("no-guests") forbid (principal in Toolgate::Group::"guests", action, resource) unless { resource == Toolgate::Tool::"echo" };`

// TestReplayRecordedPolicyHistories replays each call recorded under fixtures.RecordedPolicy on workers
// holding that set, the inverted set, log-only, and no set: each replays (the recorded decision
// is read back, never re-evaluated), and the history holds the decision that was made.
func TestReplayRecordedPolicyHistories(t *testing.T) {
	tests := []struct {
		file         string
		wantDecision wire.PolicyDecision
		wantCode     string // "" for a call that ran
	}{
		{file: "denied-group.json", wantDecision: wire.PolicyDecision{Effect: wire.PolicyDeny, PolicyID: "guests-no-echo", Reason: "guests may not echo"}, wantCode: "POLICY_DENIED"},
		{file: "denied-arguments.json", wantDecision: wire.PolicyDecision{Effect: wire.PolicyDeny, PolicyID: "add-small", Reason: "add takes left below 1000"}, wantCode: "POLICY_DENIED"},
		{file: "allowed.json", wantDecision: wire.PolicyDecision{Effect: wire.PolicyAllow}},
		{file: "log-only.json", wantDecision: wire.PolicyDecision{Effect: wire.PolicyDeny, PolicyID: "guests-no-echo", Reason: "guests may not echo", LogOnly: true}},
	}
	var files []string
	for _, tt := range tests {
		files = append(files, tt.file)
	}
	require.ElementsMatch(t, files, recordedFiles(t, "policy"))
	recorded := mustSource(t, fixtures.RecordedPolicy, false)
	sources := map[string]*policy.Source{
		"recorded": recorded, "inverted": mustSource(t, invertedPolicy, false),
		"log-only": mustSource(t, fixtures.RecordedPolicy, true), "none": nil,
	}
	reg := recordedRegistry(t)
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			path := filepath.Join(historiesDir, "policy", tt.file)
			for name, src := range sources {
				assert.NoError(t, replayWithPolicy(t, path, src), "replay with policy %s", name)
			}
			rc := readPolicyHistory(t, path)
			require.NotNil(t, rc.Decision)
			want := tt.wantDecision
			want.Hash = recorded.Current().Hash()
			assert.Equal(t, want, *rc.Decision)
			assert.Equal(t, tt.wantCode == "", rc.Accepted != nil, "ExecuteTool was scheduled only for a call that ran")
		})
	}
	// The inverted set decides each call differently: replay did not evaluate it.
	inverted := mustSource(t, invertedPolicy, false).Current()
	for _, tt := range tests {
		rc := readPolicyHistory(t, filepath.Join(historiesDir, "policy", tt.file))
		accepted := rc.Accepted
		if accepted == nil {
			accepted = rc.Call.Arguments().Raw()
		}
		tool, ok := reg.Get(rc.Call.Name())
		require.True(t, ok)
		d := inverted.Evaluate(policy.Request{Principal: rc.Principal, Tool: policy.ToolOf(tool), Arguments: accepted})
		assert.NotEqual(t, rc.Decision.Effect, d.Effect, tt.file)
	}
}

// replayWithPolicy replays the history at path on a worker holding src, under its recorded
// execution (as package replay and toolgate replay do).
func replayWithPolicy(t *testing.T, path string, src *policy.Source) error {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	hist, err := client.HistoryFromJSON(f, client.HistoryJSONOptions{})
	require.NoError(t, err)
	replayer := worker.NewWorkflowReplayer()
	(&workflows.Workflows{Registry: recordedRegistry(t), SearchAttributes: replaypkg.UpsertsSearchAttributes(hist), Policy: src}).Register(replayer)
	return replayer.ReplayWorkflowHistory(discardLogger(), hist)
}

func readPolicyHistory(t *testing.T, path string) replaypkg.RecordedCall {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	hist, err := client.HistoryFromJSON(f, client.HistoryJSONOptions{})
	require.NoError(t, err)
	rc, err := replaypkg.ReadCall(hist, nil)
	require.NoError(t, err)
	return rc
}
