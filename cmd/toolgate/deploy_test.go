package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	deploymentpb "go.temporal.io/api/deployment/v1"
	enumspb "go.temporal.io/api/enums/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"
)

// versioningClient answers DescribeWorkflowExecution with fixed versioning info.
type versioningClient struct {
	client.Client
	info *workflowpb.WorkflowExecutionVersioningInfo
}

func (c versioningClient) DescribeWorkflowExecution(context.Context, string, string) (*workflowservice.DescribeWorkflowExecutionResponse, error) {
	return &workflowservice.DescribeWorkflowExecutionResponse{
		WorkflowExecutionInfo: &workflowpb.WorkflowExecutionInfo{VersioningInfo: c.info},
	}, nil
}

// Only a run that is not pinned moves to a promoted version, so only such a run's drift refuses
// a promotion.
func TestPinnedWorkflow(t *testing.T) {
	tests := []struct {
		name string
		info *workflowpb.WorkflowExecutionVersioningInfo
		want bool
	}{
		{name: "unversioned", info: nil, want: false},
		{name: "pinned", info: &workflowpb.WorkflowExecutionVersioningInfo{Behavior: enumspb.VERSIONING_BEHAVIOR_PINNED}, want: true},
		{name: "auto-upgrade", info: &workflowpb.WorkflowExecutionVersioningInfo{Behavior: enumspb.VERSIONING_BEHAVIOR_AUTO_UPGRADE}, want: false},
		{name: "auto-upgrade pinned by an override", want: true, info: &workflowpb.WorkflowExecutionVersioningInfo{
			Behavior:           enumspb.VERSIONING_BEHAVIOR_AUTO_UPGRADE,
			VersioningOverride: &workflowpb.VersioningOverride{Override: &workflowpb.VersioningOverride_Pinned{Pinned: &workflowpb.VersioningOverride_PinnedOverride{Version: &deploymentpb.WorkerDeploymentVersion{DeploymentName: "d", BuildId: "v1"}}}},
		}},
		{name: "pinned, overridden to auto-upgrade", want: false, info: &workflowpb.WorkflowExecutionVersioningInfo{
			Behavior:           enumspb.VERSIONING_BEHAVIOR_PINNED,
			VersioningOverride: &workflowpb.VersioningOverride{Override: &workflowpb.VersioningOverride_AutoUpgrade{AutoUpgrade: true}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := pinnedWorkflow(context.Background(), versioningClient{info: tt.info}, "w", "r")
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestHistoryFiles(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"a.json", "b.json", "notes.txt"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte("{}"), 0o600))
	}
	got, err := historyFiles([]string{dir, filepath.Join(dir, "notes.txt")})
	require.NoError(t, err)
	assert.Equal(t, []string{filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json"), filepath.Join(dir, "notes.txt")}, got)

	_, err = historyFiles(nil)
	assert.ErrorContains(t, err, "--force", "no histories: the replay cannot pass")
	_, err = historyFiles([]string{t.TempDir()})
	assert.ErrorContains(t, err, "no recorded histories", "an empty directory is no histories")
	_, err = historyFiles([]string{filepath.Join(dir, "missing.json")})
	assert.Error(t, err)
}

func TestVersionState(t *testing.T) {
	st := deployStatusJSON{CurrentBuildID: "v2", RampingBuildID: "v3", RampPercentage: 10}
	summary := func(buildID string, drainage client.WorkerDeploymentVersionDrainageStatus) client.WorkerDeploymentVersionSummary {
		return client.WorkerDeploymentVersionSummary{Version: sdkworker.WorkerDeploymentVersion{DeploymentName: "d", BuildID: buildID}, DrainageStatus: drainage}
	}
	assert.Equal(t, "current", versionState(st, summary("v2", client.WorkerDeploymentVersionDrainageStatusUnspecified)))
	assert.Equal(t, "ramping 10%", versionState(st, summary("v3", client.WorkerDeploymentVersionDrainageStatusUnspecified)))
	assert.Equal(t, "draining", versionState(st, summary("v1", client.WorkerDeploymentVersionDrainageStatusDraining)))
	assert.Equal(t, "drained", versionState(st, summary("v0", client.WorkerDeploymentVersionDrainageStatusDrained)))
	assert.Equal(t, "inactive", versionState(st, summary("v4", client.WorkerDeploymentVersionDrainageStatusUnspecified)))
}
