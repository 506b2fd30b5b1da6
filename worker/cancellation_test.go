package worker

import (
	"context"
	"net"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	namespacepb "go.temporal.io/api/namespace/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
	"google.golang.org/grpc"

	"github.com/toolgate/toolgate/toolcore"
)

// capabilityServer answers DescribeNamespace with the given capabilities, and what New asks
// besides (system info, the ID-escaping probe); every other RPC is unimplemented.
type capabilityServer struct {
	workflowservice.UnimplementedWorkflowServiceServer
	caps *namespacepb.NamespaceInfo_Capabilities
}

func (s *capabilityServer) GetSystemInfo(context.Context, *workflowservice.GetSystemInfoRequest) (*workflowservice.GetSystemInfoResponse, error) {
	return &workflowservice.GetSystemInfoResponse{}, nil
}

func (s *capabilityServer) DescribeWorkflowExecution(context.Context, *workflowservice.DescribeWorkflowExecutionRequest) (*workflowservice.DescribeWorkflowExecutionResponse, error) {
	return nil, serviceerror.ToStatus(serviceerror.NewNotFound("no such workflow")).Err()
}

func (s *capabilityServer) DescribeNamespace(context.Context, *workflowservice.DescribeNamespaceRequest) (*workflowservice.DescribeNamespaceResponse, error) {
	return &workflowservice.DescribeNamespaceResponse{NamespaceInfo: &namespacepb.NamespaceInfo{Name: "default", Capabilities: s.caps}}, nil
}

// fakeFrontend serves caps on a loopback port and returns a lazy client for it.
func fakeFrontend(t *testing.T, caps *namespacepb.NamespaceInfo_Capabilities) client.Client {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := grpc.NewServer()
	workflowservice.RegisterWorkflowServiceServer(srv, &capabilityServer{caps: caps})
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	c, err := client.NewLazyClient(client.Options{HostPort: lis.Addr().String(),
		ConnectionOptions: client.ConnectionOptions{DialOptions: []grpc.DialOption{DialOption()}}})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	return c
}

// TestCancellationPushedFromTheNamespace: New reads whether the namespace pushes activity
// cancellation (worker commands and worker heartbeats both reported); without it the worker
// falls back to heartbeats for cancellation and says so once, at New (issue 27 item 4).
func TestCancellationPushedFromTheNamespace(t *testing.T) {
	tests := []struct {
		name   string
		caps   *namespacepb.NamespaceInfo_Capabilities
		pushed bool
		why    string
	}{
		{name: "pushed", caps: &namespacepb.NamespaceInfo_Capabilities{WorkerCommands: true, WorkerHeartbeats: true}, pushed: true},
		{name: "no worker commands", caps: &namespacepb.NamespaceInfo_Capabilities{WorkerHeartbeats: true}, why: "worker-commands capability"},
		{name: "no worker heartbeats", caps: &namespacepb.NamespaceInfo_Capabilities{WorkerCommands: true}, why: "worker-heartbeats capability"},
		{name: "an older server", caps: nil, why: "worker-commands capability"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			core, logs := observer.New(zapcore.InfoLevel)
			reg, err := toolcore.NewRegistry()
			require.NoError(t, err)
			no := false
			w, err := New(fakeFrontend(t, tt.caps), "default", reg, Options{SearchAttributes: &no, Logger: zap.New(core)})
			require.NoError(t, err)
			assert.Equal(t, tt.pushed, w.CancellationPushed())
			var warned []string
			for _, e := range logs.FilterLevelExact(zapcore.WarnLevel).All() {
				if strings.Contains(e.Message, "cancellation is not pushed") {
					warned = append(warned, e.Message)
				}
			}
			if tt.pushed {
				assert.Empty(t, warned)
			} else if assert.Len(t, warned, 1, "said once") {
				assert.Contains(t, warned[0], tt.why)
				assert.Contains(t, warned[0], "at most every 5 s")
			}
			built := logs.FilterMessage("worker built").All()
			require.Len(t, built, 1)
			assert.Equal(t, tt.pushed, built[0].ContextMap()["cancellationPushed"])
		})
	}
}
