package e2e

import (
	"errors"
	"os/exec"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"

	"github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/internal/devtest"
	"github.com/toolgate/toolgate/internal/testbin"
)

// limitsRefused runs `toolgate limits args...`, which must fail, and returns its output.
func limitsRefused(t *testing.T, args ...string) string {
	t.Helper()
	bin, err := testbin.Toolgate()
	require.NoError(t, err)
	srv := devtest.Server(t)
	cmd := exec.Command(bin, append(append([]string{"limits"}, args...), "--address", srv.FrontendAddress(), "--namespace", srv.Namespace())...)
	cmd.Env = testbin.ChildEnv()
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	require.True(t, errors.As(err, &exit), "toolgate limits %v fails, got %v: %s", args, err, out)
	return string(out)
}

// TestFlowMainQueueLimitRefusedOrHeld: the ExecuteTool activities of a worker's main queue are
// dispatched eagerly, past the server's limits. So `toolgate limits set` refuses a queue that
// workers poll for workflows, with the reason, and changes nothing; a limit set while no worker
// polls holds: a worker that starts on the limited queue turns eager dispatch off, and with the
// queue paused (rate 0) its call's activity stays scheduled and the tool does not run, until
// `limits reset`, when it runs once.
func TestFlowMainQueueLimitRefusedOrHeld(t *testing.T) {
	var runs atomic.Int32
	tool := addTool(t, &runs)
	e := newEnv(t, tool)
	out := limitsRefused(t, "set", "--queue", e.queue, "--rate", "1")
	assert.Contains(t, out, "dispatched eagerly")
	assert.Contains(t, out, "Declare the tool's RateLimit")
	assert.NotContains(t, limits(t, "--queue", e.queue, "--json"), `"queueRateLimit"`, "nothing was set")

	paused := &env{t: t, queue: devtest.TaskQueue(t), sdk: devtest.Client(t)}
	limits(t, "set", "--queue", paused.queue, "--rate", "0")
	paused.worker = paused.startWorker(paused.sdk, 5*time.Second, tool)
	paused.client = client.New(paused.sdk, client.Options{TaskQueue: paused.queue, Scope: paused.queue, Namespace: devtest.Server(t).Namespace()})
	ctx := paused.ctx()
	_, err := paused.client.Start(ctx, call(t, "held-1", "add", `{"left":1,"right":2}`))
	require.NoError(t, err)
	wid := paused.client.WorkflowID("held-1")
	var state enumspb.PendingActivityState
	require.Eventually(t, func() bool {
		desc, err := paused.sdk.DescribeWorkflowExecution(ctx, wid, "")
		if err != nil || len(desc.GetPendingActivities()) == 0 {
			return false
		}
		state = desc.GetPendingActivities()[0].GetState()
		return true
	}, testTimeout, 10*time.Millisecond, "the call schedules its ExecuteTool activity")
	assert.Equal(t, enumspb.PENDING_ACTIVITY_STATE_SCHEDULED, state, "the paused queue holds the activity: it was not dispatched eagerly")
	assert.Zero(t, runs.Load(), "the tool did not run")

	limits(t, "reset", "--queue", paused.queue)
	res, err := paused.client.Result(ctx, "held-1")
	require.NoError(t, err)
	assert.Equal(t, `{"sum":3}`, res.Content())
	assert.Equal(t, int32(1), runs.Load())
}
