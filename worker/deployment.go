package worker

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/toolgate/toolgate/toolcore"
)

// Deployment names the Worker Deployment Version a Worker joins (Temporal's Worker Deployment
// Versioning). Every SDK worker of one toolgate Worker (the main task queue's and each tool's
// own queue's) joins the same version. The zero Deployment is unversioned.
type Deployment struct {
	// Name of the worker deployment (one per service: every build of it shares the name).
	// Optional: default "" (unversioned); set together with BuildID.
	Name string
	// BuildID names this build within the deployment: a new tool set, new tool code or new
	// workflow code gets a new build ID. Optional: default "" (unversioned); set together with Name.
	BuildID string
	// DefaultVersioningBehavior is the versioning behavior of workflows registered without one
	// (agent workflows registered through [Worker.RegisterWorkflow]). toolgate's own workflows
	// are always Pinned. Optional: default workflow.VersioningBehaviorAutoUpgrade (a long agent
	// run moves to each promoted version at its next workflow task: keep its code
	// replay-compatible, or register it Pinned with RegisterWorkflowWithOptions).
	DefaultVersioningBehavior workflow.VersioningBehavior
}

// enabled reports whether d joins a deployment version.
func (d Deployment) enabled() bool { return d.Name != "" || d.BuildID != "" }

// String is "<name>:<build ID>", the form of the server's TemporalWorkerDeploymentVersion
// search attribute; "" when unversioned.
func (d Deployment) String() string {
	if !d.enabled() {
		return ""
	}
	return d.Name + ":" + d.BuildID
}

// check returns an error for a half-given deployment or one the server would refuse.
func (d Deployment) check() error {
	if !d.enabled() {
		return nil
	}
	if d.Name == "" || d.BuildID == "" {
		return fmt.Errorf("deployment %q build ID %q: give both a deployment name and a build ID, or neither (unversioned)", d.Name, d.BuildID)
	}
	if strings.ContainsAny(d.Name, ":.") || strings.Contains(d.BuildID, ":") {
		return fmt.Errorf("deployment %q build ID %q: the name may not contain ':' or '.', the build ID not ':'", d.Name, d.BuildID)
	}
	switch d.DefaultVersioningBehavior {
	case workflow.VersioningBehaviorUnspecified, workflow.VersioningBehaviorPinned, workflow.VersioningBehaviorAutoUpgrade:
	default:
		return fmt.Errorf("deployment %s: unknown default versioning behavior %d", d, d.DefaultVersioningBehavior)
	}
	return nil
}

// sdkOptions are the SDK's deployment options for d: versioned with d's version and default
// behavior, or the zero options when unversioned.
func (d Deployment) sdkOptions() sdkworker.DeploymentOptions {
	if !d.enabled() {
		return sdkworker.DeploymentOptions{}
	}
	behavior := d.DefaultVersioningBehavior
	if behavior == workflow.VersioningBehaviorUnspecified {
		behavior = workflow.VersioningBehaviorAutoUpgrade
	}
	return sdkworker.DeploymentOptions{
		UseVersioning:             true,
		Version:                   sdkworker.WorkerDeploymentVersion{DeploymentName: d.Name, BuildID: d.BuildID},
		DefaultVersioningBehavior: behavior,
	}
}

// VersionMetadataKey is the key of a deployment version's metadata under which a versioned
// Worker records its [VersionToolSet] when it starts.
const VersionMetadataKey = "toolgate.toolSet"

// VersionToolSet is the tool set a deployment version serves, recorded in the version's
// metadata (plain JSON, never encrypted: tool names and definition hashes only) so that
// `toolgate deploy status` and a promotion can read it after the version's workers are gone.
type VersionToolSet struct {
	// Fingerprint is the version's [ToolSetFingerprint].
	Fingerprint string `json:"fingerprint"`
	// Tools maps each tool's name to its definition hash (toolcore.Tool.DefinitionHash).
	Tools map[string]string `json:"tools"`
}

// ToolSetOf returns the VersionToolSet of reg.
func ToolSetOf(reg *toolcore.Registry) VersionToolSet {
	set := VersionToolSet{Fingerprint: ToolSetFingerprint(reg), Tools: map[string]string{}}
	for _, name := range reg.Names() {
		tool, _ := reg.Get(name)
		set.Tools[name] = tool.DefinitionHash()
	}
	return set
}

// VersionToolSetFrom reads the VersionToolSet from a deployment version's metadata (as
// client.WorkerDeploymentHandle.DescribeVersion returns it); ok is false when none is recorded.
func VersionToolSetFrom(metadata map[string]*commonpb.Payload) (set VersionToolSet, ok bool, err error) {
	p, found := metadata[VersionMetadataKey]
	if !found || p == nil {
		return VersionToolSet{}, false, nil
	}
	if err := converter.GetDefaultDataConverter().FromPayload(p, &set); err != nil {
		return VersionToolSet{}, false, fmt.Errorf("decode version metadata %s: %w", VersionMetadataKey, err)
	}
	return set, true, nil
}

// checkVersionToolSet returns an ErrToolSetConflict error when d's version already records
// another tool set than fingerprint: a build ID names one build. A version the server does not
// know yet is no conflict; another failure is reported by warn and the check passes.
func checkVersionToolSet(ctx context.Context, c client.Client, d Deployment, fingerprint string, warn func(error)) error {
	desc, err := c.WorkerDeploymentClient().GetHandle(d.Name).DescribeVersion(ctx, client.WorkerDeploymentDescribeVersionOptions{BuildID: d.BuildID})
	if err != nil {
		var notFound *serviceerror.NotFound
		if !errors.As(err, &notFound) {
			warn(fmt.Errorf("describe deployment version %s: %w", d, err))
		}
		return nil
	}
	set, ok, err := VersionToolSetFrom(desc.Info.Metadata)
	if err != nil {
		warn(err)
		return nil
	}
	if ok && set.Fingerprint != fingerprint {
		return fmt.Errorf("%w: deployment version %s records tool set %s, this worker serves tool set %s; "+
			"a build ID names one build: give this build a build ID of its own",
			ErrToolSetConflict, d, set.Fingerprint, fingerprint)
	}
	return nil
}

// recordToolSet writes set into d's version metadata. The server creates a version when its
// first worker polls, so a write that fails is retried (every 200 ms, growing to 2 s) until ctx
// ends; it returns the last error then, or at once an error no retry can mend (permission
// denied, unimplemented, invalid argument).
func recordToolSet(ctx context.Context, c client.Client, d Deployment, set VersionToolSet) error {
	payload, err := converter.GetDefaultDataConverter().ToPayload(set)
	if err != nil {
		return fmt.Errorf("encode tool set: %w", err)
	}
	h := c.WorkerDeploymentClient().GetHandle(d.Name)
	backoff := 200 * time.Millisecond
	for {
		_, err := h.UpdateVersionMetadata(ctx, client.WorkerDeploymentUpdateVersionMetadataOptions{
			Version:        sdkworker.WorkerDeploymentVersion{DeploymentName: d.Name, BuildID: d.BuildID},
			MetadataUpdate: client.WorkerDeploymentMetadataUpdate{UpsertEntries: map[string]any{VersionMetadataKey: payload}},
		})
		if err == nil {
			return nil
		}
		var denied *serviceerror.PermissionDenied
		var unimplemented *serviceerror.Unimplemented
		var invalid *serviceerror.InvalidArgument
		if errors.As(err, &denied) || errors.As(err, &unimplemented) || errors.As(err, &invalid) {
			return fmt.Errorf("record tool set in deployment version %s: %w", d, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("record tool set in deployment version %s: %w", d, err)
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 2*time.Second)
	}
}
