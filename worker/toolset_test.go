package worker

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	deploymentpb "go.temporal.io/api/deployment/v1"
	enumspb "go.temporal.io/api/enums/v1"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/toolgate/toolgate/toolcore"
)

func TestToolSetFingerprint(t *testing.T) {
	reg := func(names ...string) *toolcore.Registry {
		r, err := toolcore.NewRegistry()
		require.NoError(t, err)
		for _, name := range names {
			require.NoError(t, r.Register(tool(t, name, "")))
		}
		return r
	}
	assert.Equal(t, ToolSetFingerprint(reg("a", "b")), ToolSetFingerprint(reg("b", "a")), "order does not matter")
	assert.NotEqual(t, ToolSetFingerprint(reg("a", "b")), ToolSetFingerprint(reg("a", "b", "c")))
	assert.NotEqual(t, ToolSetFingerprint(reg("ab")), ToolSetFingerprint(reg("a", "b")), "names are delimited")
	assert.Len(t, ToolSetFingerprint(reg()), fingerprintLen)
}

func TestWorkerIdentityCarriesFingerprint(t *testing.T) {
	fp, ok := fingerprintOf(workerIdentity("0123456789abcdef"))
	assert.True(t, ok)
	assert.Equal(t, "0123456789abcdef", fp)

	_, ok = fingerprintOf("4242@host@toolgate")
	assert.False(t, ok, "an SDK default identity has no fingerprint")
}

// The fingerprint covers each tool's definition, not only its name: a build whose tool changed
// its input schema or side-effect class serves another tool set.
func TestToolSetFingerprintCoversDefinitions(t *testing.T) {
	reg := func(opts toolcore.Options) *toolcore.Registry {
		r, err := toolcore.NewRegistry()
		require.NoError(t, err)
		tl, err := toolcore.Define(toolcore.Definition[struct{}]{
			Name:        "a",
			Description: "test tool a",
			Validate:    func(toolcore.Arguments) toolcore.Decision[struct{}] { return toolcore.Accept(struct{}{}) },
			Execute:     func(context.Context, struct{}) (any, error) { return "ok", nil },
			Options:     opts,
		})
		require.NoError(t, err)
		require.NoError(t, r.Register(tl))
		return r
	}
	readOnly := ToolSetFingerprint(reg(toolcore.Options{SideEffect: toolcore.ReadOnly}))
	assert.Equal(t, readOnly, ToolSetFingerprint(reg(toolcore.Options{SideEffect: toolcore.ReadOnly})), "same definition, same fingerprint")
	assert.NotEqual(t, readOnly, ToolSetFingerprint(reg(toolcore.Options{SideEffect: toolcore.Unsafe})), "same name, another side-effect class")
}

// pollersClient answers DescribeTaskQueue with fixed pollers; every other method is nil.
type pollersClient struct {
	client.Client
	pollers []*taskqueuepb.PollerInfo
}

func (c pollersClient) DescribeTaskQueue(context.Context, string, enumspb.TaskQueueType) (*workflowservice.DescribeTaskQueueResponse, error) {
	return &workflowservice.DescribeTaskQueueResponse{Pollers: c.pollers}, nil
}

func TestCheckToolSets(t *testing.T) {
	now := time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC)
	poller := func(fingerprint string, version *deploymentpb.WorkerDeploymentOptions) *taskqueuepb.PollerInfo {
		return &taskqueuepb.PollerInfo{
			Identity:          workerIdentity(fingerprint),
			LastAccessTime:    timestamppb.New(now.Add(-time.Second)),
			DeploymentOptions: version,
		}
	}
	version := func(name, buildID string) *deploymentpb.WorkerDeploymentOptions {
		return &deploymentpb.WorkerDeploymentOptions{DeploymentName: name, BuildId: buildID, WorkerVersioningMode: enumspb.WORKER_VERSIONING_MODE_VERSIONED}
	}
	v1 := Deployment{Name: "tools", BuildID: "v1"}
	tests := []struct {
		name     string
		pollers  []*taskqueuepb.PollerInfo
		ours     Deployment
		conflict string // "" when the worker may join; else text the error contains
	}{
		{name: "unversioned, same tool set", pollers: []*taskqueuepb.PollerInfo{poller("aaaaaaaaaaaaaaaa", nil)}},
		{name: "unversioned, another tool set", pollers: []*taskqueuepb.PollerInfo{poller("bbbbbbbbbbbbbbbb", nil)},
			conflict: "run the workers in a worker deployment with a build ID per build"},
		{name: "unversioned, another tool set on a versioned worker", pollers: []*taskqueuepb.PollerInfo{poller("bbbbbbbbbbbbbbbb", version("tools", "v2"))},
			conflict: "toolgate deploy promote"},
		{name: "versioned, another tool set of another version", ours: v1,
			pollers: []*taskqueuepb.PollerInfo{poller("bbbbbbbbbbbbbbbb", version("tools", "v2"))}},
		{name: "versioned, another tool set unversioned", ours: v1,
			pollers: []*taskqueuepb.PollerInfo{poller("bbbbbbbbbbbbbbbb", nil)}},
		{name: "versioned, another tool set of another deployment's v1", ours: v1,
			pollers: []*taskqueuepb.PollerInfo{poller("bbbbbbbbbbbbbbbb", version("other", "v1"))}},
		{name: "versioned, same version, same tool set", ours: v1,
			pollers: []*taskqueuepb.PollerInfo{poller("aaaaaaaaaaaaaaaa", version("tools", "v1"))}},
		{name: "an older release's fingerprint (12 digits, names only) is not judged",
			pollers: []*taskqueuepb.PollerInfo{poller("cccccccccccc", nil)}},
		{name: "versioned, same version, another tool set", ours: v1,
			pollers:  []*taskqueuepb.PollerInfo{poller("bbbbbbbbbbbbbbbb", version("tools", "v1"))},
			conflict: `build ID "v1" of deployment "tools"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkToolSets(context.Background(), pollersClient{pollers: tt.pollers}, []string{"q"}, "aaaaaaaaaaaaaaaa", tt.ours, now,
				func(err error) { t.Errorf("unexpected warning: %v", err) })
			if tt.conflict == "" {
				assert.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrToolSetConflict)
			assert.ErrorContains(t, err, tt.conflict)
		})
	}
}

func TestCheckToolSetsIgnoresStalePollers(t *testing.T) {
	now := time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC)
	stale := &taskqueuepb.PollerInfo{Identity: workerIdentity("bbbbbbbbbbbbbbbb"), LastAccessTime: timestamppb.New(now.Add(-pollerFreshness - time.Second))}
	err := checkToolSets(context.Background(), pollersClient{pollers: []*taskqueuepb.PollerInfo{stale}}, []string{"q"}, "aaaaaaaaaaaaaaaa", Deployment{}, now, func(error) {})
	assert.NoError(t, err)
}
