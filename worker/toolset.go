package worker

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// ErrToolSetConflict: a worker serving another tool set polls one of this worker's task queues
// (unversioned), or serves this worker's deployment version. Whichever worker takes a call's
// task decides it, so the other worker's calls to tools it lacks would be recorded as
// TOOL_NOT_FOUND (and this worker's likewise). Start refuses to join. A versioned worker
// ([Options.Deployment]) is judged only against its own deployment version: a changed tool set
// under a new build ID is a rollout, never a conflict.
var ErrToolSetConflict = errors.New("another tool set is served on this task queue")

// toolSetMarker separates a toolgate worker's identity ("<pid>@<host>") from its tool set's
// fingerprint. The identity shows in the Web UI's pollers.
const toolSetMarker = wire.ToolSetIdentityMarker

// pollerFreshness: a poller the server last saw longer ago than this has stopped (a live poller
// renews its long poll at least every minute); the server keeps such entries for minutes.
const pollerFreshness = 75 * time.Second

// ToolSetFingerprint identifies the tool set of reg: the first 16 hex digits of the SHA-256 of
// one line per tool, sorted by name, "<name> <DefinitionHash>". It covers each tool's definition
// (name, input schema, side-effect class, attempts), not only its name: a build whose tool
// changed its schema serves another tool set. Workers with the same fingerprint share task
// queues safely (that is how a queue scales out); see [ErrToolSetConflict] for the others.
func ToolSetFingerprint(reg *toolcore.Registry) string {
	h := sha256.New()
	for _, name := range reg.Names() {
		tool, _ := reg.Get(name)
		h.Write([]byte(name + " " + tool.DefinitionHash() + "\n"))
	}
	return hex.EncodeToString(h.Sum(nil))[:fingerprintLen]
}

// fingerprintLen is the length of a ToolSetFingerprint. Releases before definitions counted
// used 12 digits over the names only: a fingerprint of another length is not comparable, so a
// worker upgraded to this release joins a queue its older peers (same tools) still poll.
const fingerprintLen = 16

// workerIdentity is the SDK worker identity carrying the fingerprint.
func workerIdentity(fingerprint string) string {
	host, err := os.Hostname()
	if err != nil {
		host = "unknown"
	}
	return fmt.Sprintf("%d@%s%s%s", os.Getpid(), host, toolSetMarker, fingerprint)
}

// fingerprintOf returns the fingerprint in a toolgate worker's identity; ok is false for other
// pollers (not toolgate, or older toolgate workers).
func fingerprintOf(identity string) (fingerprint string, ok bool) {
	i := strings.LastIndex(identity, toolSetMarker)
	if i < 0 {
		return "", false
	}
	return identity[i+len(toolSetMarker):], true
}

// checkToolSets returns an ErrToolSetConflict error when a live poller of another tool set polls
// one of queues (main queue first: its workflow pollers and every queue's activity pollers).
// With a deployment version (versioned is non-zero), only pollers of that same version are
// judged: workers of other versions (or unversioned ones) serve other builds by design, and the
// server routes each workflow to its own version's workers. A fingerprint of another length (an
// older release's) is not judged. A failed DescribeTaskQueue is not a conflict: it is reported
// by warn and the check passes.
func checkToolSets(ctx context.Context, c client.Client, queues []string, fingerprint string, versioned Deployment, now time.Time, warn func(error)) error {
	for i, queue := range queues {
		types := []enumspb.TaskQueueType{enumspb.TASK_QUEUE_TYPE_ACTIVITY}
		if i == 0 {
			types = append(types, enumspb.TASK_QUEUE_TYPE_WORKFLOW)
		}
		for _, typ := range types {
			resp, err := c.DescribeTaskQueue(ctx, queue, typ)
			if err != nil {
				warn(fmt.Errorf("describe task queue %q: %w", queue, err))
				continue
			}
			for _, p := range resp.GetPollers() {
				theirs, ok := fingerprintOf(p.GetIdentity())
				if !ok || theirs == fingerprint || len(theirs) != len(fingerprint) || now.Sub(p.GetLastAccessTime().AsTime()) > pollerFreshness {
					continue
				}
				if versioned.enabled() {
					d := p.GetDeploymentOptions()
					if d.GetWorkerVersioningMode() != enumspb.WORKER_VERSIONING_MODE_VERSIONED ||
						d.GetDeploymentName() != versioned.Name || d.GetBuildId() != versioned.BuildID {
						continue
					}
					return fmt.Errorf("%w: worker %q (tool set %s) serves build ID %q of deployment %q on task queue %q, this worker serves tool set %s; "+
						"a build ID names one build: give this build a build ID of its own",
						ErrToolSetConflict, p.GetIdentity(), theirs, versioned.BuildID, versioned.Name, queue, fingerprint)
				}
				return fmt.Errorf("%w: worker %q (tool set %s) polls task queue %q, this worker serves tool set %s; "+
					"to roll out a changed tool set, run the workers in a worker deployment with a build ID per build "+
					"(toolgate worker --deployment-name/--build-id, worker.Options.Deployment) and promote with toolgate deploy promote; "+
					"to serve both at once, give each tool set its own task queue (worker.Options.TaskQueue, and the same queue in the clients); "+
					"if that worker has just stopped, its entry expires within %s",
					ErrToolSetConflict, p.GetIdentity(), theirs, queue, fingerprint, pollerFreshness)
			}
		}
	}
	return nil
}
