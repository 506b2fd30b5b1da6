package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdkclient "go.temporal.io/sdk/client"

	tgclient "github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/worker"
)

var rolloutLong = flag.Bool("rollout.long", false, "TestVersionedRollout with 50 calls in flight (the issue's figure) instead of 10")

// TestVersionedRollout rolls a changed tool set out with Worker Deployment Versioning, with the
// real binary: two `toolgate worker` processes of one deployment, v1 (the toolbox without a
// root) and v2 (with --root: three more tools, another tool-set fingerprint). v2 starts beside
// v1 without a refusal. Calls held in v1's sleep tool are in flight when `toolgate deploy
// promote v2` passes its checks (the replay of a recorded history; the held calls are pinned to
// v1, so they do not count as drift); each completes on v1 (every workflow task and its
// activity by v1's worker, in its history), new calls run on v2. A promotion back to v1 whose
// replay fails (a history of v2's read_file, which v1 lacks) is refused and changes nothing, and
// so is a ramp; a forced ramp and --clear change the ramping version.
func TestVersionedRollout(t *testing.T) {
	held := 10
	if *rolloutLong {
		held = 50
	}
	const queue, deployment = "rollout", "tools"
	dev := startDev(t, "--in-memory", "--no-ui")
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "note.txt"), []byte("v2 reads files"), 0o600))
	env := append(dev.env(), "TOOLGATE_TASK_QUEUE="+queue, "TOOLGATE_DEPLOYMENT_NAME="+deployment)
	v2env := append(env, "TOOLGATE_ROOT="+root)

	startWorker := func(env []string, buildID string) *process {
		p := startProcess(t, env, "worker", "--build-id", buildID)
		p.waitLine(t, p.stderr, "worker started")
		assert.NotContains(t, p.stderrText(), "cannot record the tool set", "Start recorded the tool set in the version's metadata")
		return p
	}
	status := func() deployStatusJSON {
		got := toolgate(t, env, "", "deploy", "status", "--json")
		require.Equal(t, ExitOK, got.code, got.stderr)
		var st deployStatusJSON
		require.NoError(t, json.Unmarshal([]byte(got.stdout), &st), got.stdout)
		return st
	}
	version := func(st deployStatusJSON, buildID string) deployVersionJSON {
		for _, v := range st.Versions {
			if v.BuildID == buildID {
				return v
			}
		}
		require.FailNow(t, "no version "+buildID, "%+v", st)
		return deployVersionJSON{}
	}

	v1 := startWorker(env, "v1")
	got := toolgate(t, env, "", "deploy", "promote", "v1")
	assert.Equal(t, ExitUsage, got.code, "without histories the checks cannot pass: "+got.stderr)
	assert.Contains(t, got.stderr, "--histories")
	got = toolgate(t, env, "", "deploy", "promote", "v1", "--force")
	require.Equal(t, ExitOK, got.code, got.stderr)
	assert.Contains(t, got.stdout, "current version v1")

	// A history recorded on v1, replayed before the promotion of v2.
	dir := t.TempDir()
	got = toolgate(t, env, "", "call", "--id", "add-v1", "add", `{"left":20,"right":22}`)
	require.Equal(t, ExitOK, got.code, got.stderr)
	addHistory := filepath.Join(dir, "add-v1.json")
	got = toolgate(t, env, "", "history", "--call-id", "add-v1", "-o", addHistory)
	require.Equal(t, ExitOK, got.code, got.stderr)

	// v2 starts beside v1 before the calls, so they are held on v1 for the promotion's checks only.
	v2 := startWorker(v2env, "v2")
	assert.NotContains(t, v2.stderrText(), worker.ErrToolSetConflict.Error(), "a changed tool set under a new build ID is never refused")

	sdk, err := sdkclient.Dial(sdkclient.Options{HostPort: dev.addr["frontend"], Namespace: dev.addr["namespace"]})
	require.NoError(t, err)
	defer sdk.Close()
	tg := tgclient.New(sdk, tgclient.Options{TaskQueue: queue})
	ctx, cancel := context.WithTimeout(context.Background(), processTimeout)
	defer cancel()
	var heldIDs []string
	for i := range held {
		call, err := toolcore.NewToolCall(fmt.Sprintf("held-%d", i), "sleep", []byte(`{"seconds":15}`))
		require.NoError(t, err)
		id, err := tg.Start(ctx, call)
		require.NoError(t, err)
		heldIDs = append(heldIDs, id)
	}

	var st deployStatusJSON
	require.Eventually(t, func() bool {
		st = status()
		return version(st, "v1").RunningCalls == int64(held)
	}, lineTimeout, 200*time.Millisecond, "every held call runs on v1")
	require.Equal(t, "v1", st.CurrentBuildID)
	t.Logf("before the promotion: %+v", st)
	fingerprintV1, fingerprintV2 := version(st, "v1").ToolSet, version(st, "v2").ToolSet
	require.NotEmpty(t, fingerprintV1)
	require.NotEmpty(t, fingerprintV2)
	assert.NotEqual(t, fingerprintV1, fingerprintV2)
	assert.Contains(t, version(st, "v2").Tools, "read_file")
	assert.NotContains(t, version(st, "v1").Tools, "read_file")

	// promote v2 with the held calls in flight: v2's toolbox (TOOLGATE_ROOT), v1's history.
	got = toolgate(t, v2env, "", "deploy", "promote", "v2", "--histories", dir)
	require.Equal(t, ExitOK, got.code, got.stdout+got.stderr)
	assert.Contains(t, got.stdout, "current version v2 (was v1)")
	t.Logf("promoted with %d calls in flight on v1: %s; %d still running after it", held, strings.TrimSpace(got.stdout), version(status(), "v1").RunningCalls)

	got = toolgate(t, env, "", "call", "--id", "read-v2", "read_file", `{"path":"note.txt"}`)
	require.Equal(t, ExitOK, got.code, got.stderr)
	assert.Contains(t, got.stdout, "v2 reads files", "a new call runs on v2, the only version with read_file")

	for _, id := range heldIDs {
		res, err := tg.ResultByWorkflowID(ctx, id)
		require.NoError(t, err, id)
		assert.False(t, res.IsError(), id)
		assertRanOn(t, ctx, sdk, id, "v1", fingerprintV1)
	}
	assertRanOn(t, ctx, sdk, tg.WorkflowID("read-v2"), "v2", fingerprintV2)
	got = toolgate(t, env, "", "call", "--id", "add-v2", "add", `{"left":1,"right":2}`)
	require.Equal(t, ExitOK, got.code, got.stderr)
	assertRanOn(t, ctx, sdk, tg.WorkflowID("add-v2"), "v2", fingerprintV2)

	// A promotion whose replay fails is refused: v1's toolbox lacks read_file.
	readHistory := filepath.Join(dir, "read-v2.json")
	got = toolgate(t, env, "", "history", "--call-id", "read-v2", "-o", readHistory)
	require.Equal(t, ExitOK, got.code, got.stderr)
	got = toolgate(t, env, "", "deploy", "promote", "v1", "--histories", readHistory)
	assert.Equal(t, ExitErrorResult, got.code, got.stdout+got.stderr)
	assert.Contains(t, got.stderr, "fail replay")
	assert.Contains(t, got.stderr, "read-v2.json")
	t.Logf("refused: %s", strings.TrimSpace(got.stderr))
	st = status()
	assert.Equal(t, "v2", st.CurrentBuildID, "a refused promotion changes nothing")
	t.Logf("after: %+v", st)

	// A ramp passes the same checks (--force skips them) and --clear ends it.
	got = toolgate(t, env, "", "deploy", "ramp", "v1", "--percent", "5", "--histories", readHistory)
	assert.Equal(t, ExitErrorResult, got.code, got.stdout+got.stderr)
	got = toolgate(t, env, "", "deploy", "ramp", "v1", "--percent", "5", "--force")
	require.Equal(t, ExitOK, got.code, got.stderr)
	st = status()
	assert.Equal(t, "v1", st.RampingBuildID)
	assert.Equal(t, "ramping 5%", version(st, "v1").State)
	got = toolgate(t, env, "", "deploy", "ramp", "--clear")
	require.Equal(t, ExitOK, got.code, got.stderr)
	assert.Empty(t, status().RampingBuildID)

	assert.Equal(t, 0, v2.interrupt(t), v2.stderrText())
	assert.Equal(t, 0, v1.interrupt(t), v1.stderrText())
}

// assertRanOn checks in the workflow's history that every workflow task was completed by
// buildID's version and by a worker of tool set fingerprint, and so was every activity.
func assertRanOn(t *testing.T, ctx context.Context, sdk sdkclient.Client, workflowID, buildID, fingerprint string) {
	t.Helper()
	iter := sdk.GetWorkflowHistory(ctx, workflowID, "", false, 0)
	tasks, activities := 0, 0
	for iter.HasNext() {
		e, err := iter.Next()
		require.NoError(t, err)
		if a := e.GetWorkflowTaskCompletedEventAttributes(); a != nil {
			tasks++
			assert.Equal(t, buildID, a.GetDeploymentVersion().GetBuildId(), "%s: workflow task %d", workflowID, e.GetEventId())
			assert.True(t, strings.HasSuffix(a.GetIdentity(), "toolset:"+fingerprint), "%s: workflow task %d by %s", workflowID, e.GetEventId(), a.GetIdentity())
		}
		if a := e.GetActivityTaskCompletedEventAttributes(); a != nil {
			activities++
			assert.True(t, strings.HasSuffix(a.GetIdentity(), "toolset:"+fingerprint), "%s: activity by %s", workflowID, a.GetIdentity())
		}
	}
	assert.Positive(t, tasks, workflowID)
	assert.Equal(t, 1, activities, workflowID)
}
