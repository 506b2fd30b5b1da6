package worker

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/toolgate/toolgate/toolcore"
)

func TestDeploymentCheck(t *testing.T) {
	tests := []struct {
		name    string
		give    Deployment
		wantErr string
	}{
		{name: "unversioned", give: Deployment{}},
		{name: "versioned", give: Deployment{Name: "tools", BuildID: "2026-12-06.1"}},
		{name: "pinned default", give: Deployment{Name: "tools", BuildID: "b", DefaultVersioningBehavior: workflow.VersioningBehaviorPinned}},
		{name: "name only", give: Deployment{Name: "tools"}, wantErr: "give both"},
		{name: "build ID only", give: Deployment{BuildID: "b"}, wantErr: "give both"},
		{name: "name with a colon", give: Deployment{Name: "a:b", BuildID: "b"}, wantErr: "may not contain"},
		{name: "build ID with a colon", give: Deployment{Name: "a", BuildID: "b:c"}, wantErr: "may not contain"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.give.check()
			if tt.wantErr == "" {
				assert.NoError(t, err)
				return
			}
			assert.ErrorContains(t, err, tt.wantErr)
		})
	}
}

func TestDeploymentSDKOptions(t *testing.T) {
	assert.Equal(t, sdkworker.DeploymentOptions{}, Deployment{}.sdkOptions(), "unversioned")
	got := Deployment{Name: "tools", BuildID: "b1"}.sdkOptions()
	assert.True(t, got.UseVersioning)
	assert.Equal(t, sdkworker.WorkerDeploymentVersion{DeploymentName: "tools", BuildID: "b1"}, got.Version)
	assert.Equal(t, workflow.VersioningBehaviorAutoUpgrade, got.DefaultVersioningBehavior, "agent workflows default to AutoUpgrade")
	got = Deployment{Name: "tools", BuildID: "b1", DefaultVersioningBehavior: workflow.VersioningBehaviorPinned}.sdkOptions()
	assert.Equal(t, workflow.VersioningBehaviorPinned, got.DefaultVersioningBehavior)
	assert.Equal(t, "tools:b1", Deployment{Name: "tools", BuildID: "b1"}.String())
}

// A version's recorded tool set reads back as written, and a version without one says so.
func TestVersionToolSetRoundTrip(t *testing.T) {
	reg, err := toolcore.NewRegistry(tool(t, "a", ""), tool(t, "b", "side"))
	require.NoError(t, err)
	set := ToolSetOf(reg)
	assert.Equal(t, ToolSetFingerprint(reg), set.Fingerprint)
	require.Len(t, set.Tools, 2)
	a, _ := reg.Get("a")
	assert.Equal(t, a.DefinitionHash(), set.Tools["a"])

	payload, err := converter.GetDefaultDataConverter().ToPayload(set)
	require.NoError(t, err)
	got, ok, err := VersionToolSetFrom(map[string]*commonpb.Payload{VersionMetadataKey: payload, "other": payload})
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, set, got)

	_, ok, err = VersionToolSetFrom(map[string]*commonpb.Payload{"other": payload})
	require.NoError(t, err)
	assert.False(t, ok)
}

// Every SDK worker of a Worker, the main queue's and each tool queue's, joins the same version.
func TestSDKOptionsJoinTheDeployment(t *testing.T) {
	d := Deployment{Name: "tools", BuildID: "b1"}
	w := &Worker{toolSet: VersionToolSet{Fingerprint: "aaaaaaaaaaaa"}}
	for _, activitiesOnly := range []bool{false, true} {
		so := w.sdkOptions(Options{Deployment: d}.withDefaults(), activitiesOnly)
		assert.Equal(t, d.sdkOptions(), so.DeploymentOptions, "activitiesOnly=%v", activitiesOnly)
	}
	so := w.sdkOptions(Options{}.withDefaults(), false)
	assert.False(t, so.DeploymentOptions.UseVersioning, "unversioned by default")
}
