package e2e

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdkclient "go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	sdkworker "go.temporal.io/sdk/worker"
	"google.golang.org/grpc"

	"github.com/toolgate/toolgate/activities"
	"github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/internal/devtest"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/worker"
	"github.com/toolgate/toolgate/workflows"
)

// heartbeatCounter counts the activity heartbeat RPCs a client sends.
type heartbeatCounter struct{ n atomic.Int64 }

func (h *heartbeatCounter) intercept(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	if strings.HasSuffix(method, "/RecordActivityTaskHeartbeat") || strings.HasSuffix(method, "/RecordActivityTaskHeartbeatById") {
		h.n.Add(1)
	}
	return invoker(ctx, method, req, reply, cc, opts...)
}

// TestCancelPushedReachesAHeldTool: on a server that pushes cancellation (toolgate dev), a held
// call whose tool beats only every 10 minutes when idle is canceled, and the tool's context ends
// with the server's cancellation, before its worker sent any heartbeat: the cancellation came
// pushed, not in a heartbeat response (issue 27 item 4). The worker has no Attempts, so nothing
// hurries the heartbeats either: only the push can end the call within the test's timeout.
func TestCancelPushedReachesAHeldTool(t *testing.T) {
	srv := devtest.Server(t)
	beats := &heartbeatCounter{}
	sdk, err := sdkclient.Dial(sdkclient.Options{
		HostPort:  srv.FrontendAddress(),
		Namespace: srv.Namespace(),
		ConnectionOptions: sdkclient.ConnectionOptions{
			DialOptions: []grpc.DialOption{worker.DialOption(), grpc.WithChainUnaryInterceptor(beats.intercept)},
		},
	})
	require.NoError(t, err)
	t.Cleanup(sdk.Close)

	started, causes := make(chan struct{}, 1), make(chan error, 1)
	held := define(t, "held", toolcore.Options{SideEffect: toolcore.ReadOnly, Timeout: time.Hour,
		HeartbeatTimeout: 20 * time.Minute, IdleHeartbeat: 10 * time.Minute},
		func(ctx context.Context, _ args) (any, error) {
			started <- struct{}{}
			<-ctx.Done()
			causes <- context.Cause(ctx)
			return nil, context.Cause(ctx)
		})
	reg, err := toolcore.NewRegistry(held)
	require.NoError(t, err)
	queue := devtest.TaskQueue(t)
	w := sdkworker.New(sdk, queue, sdkworker.Options{
		MaxHeartbeatThrottleInterval:     activities.SDKHeartbeatThrottle,
		DefaultHeartbeatThrottleInterval: activities.SDKHeartbeatThrottle,
	})
	(&workflows.Workflows{Registry: reg, TaskQueue: queue}).Register(w)
	(&activities.Activities{Registry: reg, Heartbeats: sdk, CancellationPushed: true}).Register(w)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)

	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	cl := client.New(sdk, client.Options{TaskQueue: queue, Scope: queue, Namespace: srv.Namespace()})
	id, err := cl.Start(ctx, call(t, "held-1", "held", `{}`))
	require.NoError(t, err)
	select {
	case <-started:
	case <-ctx.Done():
		t.Fatal("the tool did not start")
	}
	require.NoError(t, sdk.CancelWorkflow(ctx, id, ""))
	select {
	case cause := <-causes:
		var canceled *temporal.CanceledError
		assert.True(t, errors.As(cause, &canceled), "the tool's context ends with the server's cancellation, got %v", cause)
	case <-ctx.Done():
		t.Fatal("the cancellation did not reach the tool")
	}
	assert.Zero(t, beats.n.Load(), "no heartbeat was sent: the cancellation was pushed")
	var canceled *temporal.CanceledError
	assert.ErrorAs(t, sdk.GetWorkflow(ctx, id, "").Get(ctx, nil), &canceled, "the call ends canceled")
}

// TestWorkerSeesCancellationPushed: a worker on toolgate dev reads that the namespace pushes
// cancellation, so its held calls beat for liveness only.
func TestWorkerSeesCancellationPushed(t *testing.T) {
	e := newEnv(t, addTool(t, new(atomic.Int32)))
	assert.True(t, e.worker.CancellationPushed())
}
