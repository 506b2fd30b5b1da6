package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"
	"go.uber.org/zap"

	"github.com/toolgate/toolgate/internal/logging"
	"github.com/toolgate/toolgate/wire"
	"github.com/toolgate/toolgate/worker"
)

// deployOptions are the flags every deploy subcommand shares.
type deployOptions struct {
	conn       connOptions
	deployment string
}

// gateOptions are the flags of a routing change (promote, ramp): what the gate checks with.
type gateOptions struct {
	toolbox   toolboxOptions
	taskQueue string
	histories []string
	force     bool
}

func newDeployCommand(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "deploy",
		Short: "Show a worker deployment's versions, promote or ramp one",
		Long: `Roll out a new build of the workers with Temporal's Worker Deployment Versioning. Workers
started with --deployment-name and --build-id join a version of the deployment; the version
that is current gets every new call, and a call stays on the version that validated it (tool
calls are pinned) until it ends, so a new tool set never meets calls recorded by the old one.

  1. Start the new build's workers beside the old ones, with a new --build-id (nothing is
     refused: each version's workers serve only its own calls).
  2. toolgate deploy status: the versions, each one's tool set and running calls.
  3. toolgate deploy promote BUILD_ID --histories DIR (with the new build's --root and
     --allow-host): the new version becomes current once the drift check and the replay of the
     recorded histories pass. Or ramp first: toolgate deploy ramp BUILD_ID --percent 10.
  4. Stop the old build's workers when status shows its version drained.

--deployment-name (or TOOLGATE_DEPLOYMENT_NAME) names the deployment, as on the workers.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cmd.SetOut(a.err)
			_ = cmd.Help()
			return badInput(errors.New("deploy: missing subcommand (status, promote or ramp)"))
		},
	}
	cmd.AddCommand(newDeployStatusCommand(a), newDeployPromoteCommand(a), newDeployRampCommand(a))
	return cmd
}

// dial connects to the server once --deployment-name is given (cmd prefixes the usage error).
func (o deployOptions) dial(ctx context.Context, a *app, cmd string) (client.Client, error) {
	if o.deployment == "" {
		return nil, badInput(fmt.Errorf("%s: --deployment-name (or $TOOLGATE_DEPLOYMENT_NAME) is required", cmd))
	}
	return o.conn.dial(ctx, a.logger)
}

func addDeployFlags(cmd *cobra.Command, o *deployOptions) {
	addConnFlags(cmd, &o.conn)
	fs := cmd.Flags()
	fs.StringVar(&o.deployment, "deployment-name", "", "the worker deployment, as on its workers (required)")
	bindEnv(fs, "deployment-name", "TOOLGATE_DEPLOYMENT_NAME")
}

func addGateFlags(cmd *cobra.Command, o *gateOptions) {
	addToolboxFlags(cmd, &o.toolbox)
	addTaskQueueFlag(cmd, &o.taskQueue)
	fs := cmd.Flags()
	fs.StringArrayVar(&o.histories, "histories", nil, "a recorded history (JSON) or a directory of them (*.json) to replay against this build before the change (repeat)")
	fs.BoolVar(&o.force, "force", false, "skip the tool-set, drift and replay checks (warns)")
}

func newDeployStatusCommand(a *app) *cobra.Command {
	var o deployOptions
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show a deployment's versions, their tool sets and running calls",
		Long: `Show the deployment's versions: which is current, which ramping (and at what percentage),
which draining (pinned workflows still run on it) or drained, each version's tool set as its
workers recorded it in the version's metadata (fingerprint and tool count; "-" when none was
recorded), and its running calls and workflows (visibility: TemporalWorkerDeploymentVersion
with ExecutionStatus = 'Running'; it lags the server by a moment).

--json prints {"deployment","currentBuildId","rampingBuildId","rampPercentage","versions":[{"buildId",
"state","createTime","toolSet","tools","runningCalls","runningWorkflows"}]}.`,
		Example: `  toolgate deploy status --deployment-name tools
  TOOLGATE_DEPLOYMENT_NAME=tools toolgate deploy status --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runDeployStatus(cmd.Context(), a, o, asJSON)
		},
	}
	addDeployFlags(cmd, &o)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object")
	return cmd
}

func newDeployPromoteCommand(a *app) *cobra.Command {
	var o deployOptions
	var g gateOptions
	cmd := &cobra.Command{
		Use:   "promote BUILD_ID",
		Short: "Make a version current after the drift check and a replay pass",
		Long: `Make BUILD_ID the deployment's current version: every new call, and every workflow that is
not pinned (agent workflows registered AutoUpgrade, calls started before the workers were
versioned), runs on it from then on. Calls pinned to another version finish there.

Before it changes anything, promote checks, with this binary's toolbox (--root, --allow-host:
give the new build's):
  - the tool set: the version's workers recorded the same tool set as this toolbox's;
  - drift: no running call on --task-queue that would move to the version (one not pinned) has
    a recorded tool definition that differs from the version's (toolgate drift);
  - replay: every history of --histories replays against this build (toolgate replay).
A refusal is one line and changes nothing. --force skips the checks, with a warning. The first
version of a deployment has no histories yet: promote it with --force.

Exit codes: 0 promoted (or already current), 1 refused by a check, 2 usage, 5 other failures
(the server refused, for example a version without pollers).`,
		Example: `  toolgate deploy promote v2 --deployment-name tools --root /srv/docs --histories testdata/histories
  toolgate deploy promote v1 --deployment-name tools --force`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runDeployRoute(cmd.Context(), a, o, g, args[0], -1)
		},
	}
	addDeployFlags(cmd, &o)
	addGateFlags(cmd, &g)
	return cmd
}

func newDeployRampCommand(a *app) *cobra.Command {
	var o deployOptions
	var g gateOptions
	var percent float32
	var clear bool
	cmd := &cobra.Command{
		Use:   "ramp BUILD_ID --percent P",
		Short: "Send a percentage of new calls to a version, after the same checks as promote",
		Long: `Make BUILD_ID the deployment's ramping version at --percent (0 to 100): that share of new
calls, and of the workflows that are not pinned, runs on it; the rest on the current version.
It passes the same checks as promote first (tool set, drift, replay of --histories; --force
skips them). --clear stops ramping (no BUILD_ID, no checks).`,
		Example: `  toolgate deploy ramp v2 --percent 10 --deployment-name tools --histories testdata/histories
  toolgate deploy ramp --clear --deployment-name tools`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case clear && len(args) == 0:
				return runDeployRoute(cmd.Context(), a, o, gateOptions{force: true}, "", 0)
			case clear:
				return badInput(errors.New("deploy ramp: --clear takes no BUILD_ID"))
			case len(args) == 0:
				return badInput(errors.New("deploy ramp: give BUILD_ID and --percent, or --clear"))
			case percent <= 0 || percent > 100:
				return badInput(fmt.Errorf("deploy ramp: --percent %g: want more than 0, at most 100", percent))
			}
			return runDeployRoute(cmd.Context(), a, o, g, args[0], percent)
		},
	}
	addDeployFlags(cmd, &o)
	addGateFlags(cmd, &g)
	cmd.Flags().Float32Var(&percent, "percent", 0, "share of new calls for BUILD_ID, more than 0 and at most 100")
	cmd.Flags().BoolVar(&clear, "clear", false, "stop ramping")
	return cmd
}

// deployVersionJSON is one version in deploy status --json.
type deployVersionJSON struct {
	BuildID          string    `json:"buildId"`
	State            string    `json:"state"`
	CreateTime       time.Time `json:"createTime"`
	ToolSet          string    `json:"toolSet,omitempty"`
	Tools            []string  `json:"tools,omitempty"`
	RunningCalls     int64     `json:"runningCalls"`
	RunningWorkflows int64     `json:"runningWorkflows"`
}

type deployStatusJSON struct {
	Deployment     string              `json:"deployment"`
	CurrentBuildID string              `json:"currentBuildId,omitempty"`
	RampingBuildID string              `json:"rampingBuildId,omitempty"`
	RampPercentage float32             `json:"rampPercentage,omitempty"`
	Versions       []deployVersionJSON `json:"versions"`
}

func runDeployStatus(ctx context.Context, a *app, o deployOptions, asJSON bool) error {
	c, err := o.dial(ctx, a, "deploy status")
	if err != nil {
		return err
	}
	defer c.Close()
	st, err := deploymentStatus(ctx, c, o.conn.namespace, o.deployment)
	if err != nil {
		return err
	}
	if asJSON {
		return writeJSON(a.out, st)
	}
	tw := tabwriter.NewWriter(a.out, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "deployment %s\n", st.Deployment)
	fmt.Fprintln(tw, "BUILD ID\tSTATE\tTOOL SET\tTOOLS\tRUNNING CALLS\tRUNNING WORKFLOWS")
	for _, v := range st.Versions {
		tools := "-"
		if v.ToolSet != "" {
			tools = fmt.Sprint(len(v.Tools))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\n", v.BuildID, v.State, orDash(v.ToolSet), tools, v.RunningCalls, v.RunningWorkflows)
	}
	return tw.Flush()
}

// deploymentStatus describes the deployment and each version: routing state, recorded tool set,
// running calls and workflows.
func deploymentStatus(ctx context.Context, c client.Client, namespace, deployment string) (deployStatusJSON, error) {
	h := c.WorkerDeploymentClient().GetHandle(deployment)
	desc, err := h.Describe(ctx, client.WorkerDeploymentDescribeOptions{})
	if err != nil {
		return deployStatusJSON{}, describeError(deployment, err)
	}
	rc := desc.Info.RoutingConfig
	st := deployStatusJSON{Deployment: deployment, Versions: []deployVersionJSON{}}
	if rc.CurrentVersion != nil {
		st.CurrentBuildID = rc.CurrentVersion.BuildID
	}
	if rc.RampingVersion != nil {
		st.RampingBuildID, st.RampPercentage = rc.RampingVersion.BuildID, rc.RampingVersionPercentage
	}
	for _, s := range desc.Info.VersionSummaries {
		v := deployVersionJSON{BuildID: s.Version.BuildID, CreateTime: s.CreateTime, State: versionState(st, s)}
		vd, err := h.DescribeVersion(ctx, client.WorkerDeploymentDescribeVersionOptions{BuildID: v.BuildID})
		if err != nil {
			return deployStatusJSON{}, fmt.Errorf("describe version %s of deployment %s: %w", v.BuildID, deployment, err)
		}
		if set, ok, err := worker.VersionToolSetFrom(vd.Info.Metadata); err != nil {
			return deployStatusJSON{}, fmt.Errorf("version %s of deployment %s: %w", v.BuildID, deployment, err)
		} else if ok {
			v.ToolSet, v.Tools = set.Fingerprint, slices.Sorted(maps.Keys(set.Tools))
		}
		running := fmt.Sprintf("TemporalWorkerDeploymentVersion = %s AND ExecutionStatus = 'Running'", wire.QueryString(deployment+":"+v.BuildID))
		if v.RunningWorkflows, err = countWorkflows(ctx, c, namespace, running); err != nil {
			return deployStatusJSON{}, err
		}
		if v.RunningCalls, err = countWorkflows(ctx, c, namespace, running+fmt.Sprintf(" AND WorkflowType = '%s'", wire.ToolCallWorkflowName)); err != nil {
			return deployStatusJSON{}, err
		}
		st.Versions = append(st.Versions, v)
	}
	slices.SortFunc(st.Versions, func(a, b deployVersionJSON) int { return b.CreateTime.Compare(a.CreateTime) })
	return st, nil
}

// versionState is current, ramping N%, draining, drained or inactive.
func versionState(st deployStatusJSON, s client.WorkerDeploymentVersionSummary) string {
	switch {
	case s.Version.BuildID == st.CurrentBuildID:
		return "current"
	case s.Version.BuildID == st.RampingBuildID:
		return fmt.Sprintf("ramping %g%%", st.RampPercentage)
	case s.DrainageStatus == client.WorkerDeploymentVersionDrainageStatusDraining:
		return "draining"
	case s.DrainageStatus == client.WorkerDeploymentVersionDrainageStatusDrained:
		return "drained"
	default:
		return "inactive"
	}
}

func countWorkflows(ctx context.Context, c client.Client, namespace, query string) (int64, error) {
	resp, err := c.CountWorkflow(ctx, &workflowservice.CountWorkflowExecutionsRequest{Namespace: namespace, Query: query})
	if err != nil {
		return 0, fmt.Errorf("count workflows (%s): %w", query, err)
	}
	return resp.GetCount(), nil
}

func describeError(deployment string, err error) error {
	var notFound *serviceerror.NotFound
	if errors.As(err, &notFound) {
		return badInput(fmt.Errorf("deployment %q not found: no worker has joined it (toolgate worker --deployment-name %s --build-id ID)", deployment, deployment))
	}
	return fmt.Errorf("describe deployment %s: %w", deployment, err)
}

// refused is a check's refusal of a routing change: one line, exit 1, nothing changed.
func refused(format string, args ...any) error {
	return &exitError{code: ExitErrorResult, err: fmt.Errorf(format, args...)}
}

// runDeployRoute makes buildID current (percent < 0) or ramping at percent (buildID "" and
// percent 0: stop ramping), after the gate unless g.force.
func runDeployRoute(ctx context.Context, a *app, o deployOptions, g gateOptions, buildID string, percent float32) error {
	c, err := o.dial(ctx, a, "deploy")
	if err != nil {
		return err
	}
	defer c.Close()
	h := c.WorkerDeploymentClient().GetHandle(o.deployment)
	desc, err := h.Describe(ctx, client.WorkerDeploymentDescribeOptions{})
	if err != nil {
		return describeError(o.deployment, err)
	}
	rc := desc.Info.RoutingConfig
	if buildID != "" {
		if !slices.ContainsFunc(desc.Info.VersionSummaries, func(s client.WorkerDeploymentVersionSummary) bool { return s.Version.BuildID == buildID }) {
			return badInput(fmt.Errorf("deployment %s has no version %q: start its workers first (toolgate worker --deployment-name %s --build-id %s)", o.deployment, buildID, o.deployment, buildID))
		}
		if percent < 0 && rc.CurrentVersion != nil && rc.CurrentVersion.BuildID == buildID {
			fmt.Fprintf(a.out, "deployment %s: %s is already the current version\n", o.deployment, buildID)
			return nil
		}
	}
	if g.force {
		if buildID != "" {
			a.logger.Warn("--force: promoting without the tool-set, drift and replay checks", zap.String("buildId", buildID))
		}
	} else if err := checkRoute(ctx, a, o, g, c, buildID); err != nil {
		return err
	}
	// The conflict token makes the change fail if the routing changed since the checks read it.
	// Task queues the old version served and this one does not (a removed tool's own queue)
	// are no obstacle: a version's queues are exactly what its tools need.
	// The previous state is the one Describe read: the conflict token guarantees it still held.
	if percent < 0 {
		_, err := h.SetCurrentVersion(ctx, client.WorkerDeploymentSetCurrentVersionOptions{
			BuildID: buildID, ConflictToken: desc.ConflictToken, IgnoreMissingTaskQueues: true,
		})
		if err != nil {
			return fmt.Errorf("set current version %s of deployment %s: %w", buildID, o.deployment, err)
		}
		fmt.Fprintf(a.out, "deployment %s: current version %s (was %s)\n", o.deployment, buildID, buildIDOrNone(rc.CurrentVersion))
		return nil
	}
	_, err = h.SetRampingVersion(ctx, client.WorkerDeploymentSetRampingVersionOptions{
		BuildID: buildID, Percentage: percent, ConflictToken: desc.ConflictToken, IgnoreMissingTaskQueues: true,
	})
	if err != nil {
		return fmt.Errorf("set ramping version %q of deployment %s: %w", buildID, o.deployment, err)
	}
	if buildID == "" {
		fmt.Fprintf(a.out, "deployment %s: not ramping (was %s at %g%%)\n", o.deployment, buildIDOrNone(rc.RampingVersion), rc.RampingVersionPercentage)
		return nil
	}
	fmt.Fprintf(a.out, "deployment %s: ramping version %s at %g%% (was %s at %g%%)\n", o.deployment, buildID, percent, buildIDOrNone(rc.RampingVersion), rc.RampingVersionPercentage)
	return nil
}

func buildIDOrNone(v *sdkworker.WorkerDeploymentVersion) string {
	if v == nil || v.BuildID == "" {
		return "none"
	}
	return v.BuildID
}

// checkRoute is the gate of a routing change to buildID: the version's recorded tool set is
// this toolbox's, no call that would move to it drifted, and every recorded history replays.
func checkRoute(ctx context.Context, a *app, o deployOptions, g gateOptions, c client.Client, buildID string) error {
	reg, err := g.toolbox.registry(nil)
	if err != nil {
		return err
	}
	files, err := historyFiles(g.histories)
	if err != nil {
		return err
	}
	vd, err := c.WorkerDeploymentClient().GetHandle(o.deployment).DescribeVersion(ctx, client.WorkerDeploymentDescribeVersionOptions{BuildID: buildID})
	if err != nil {
		return fmt.Errorf("describe version %s of deployment %s: %w", buildID, o.deployment, err)
	}
	set, ok, err := worker.VersionToolSetFrom(vd.Info.Metadata)
	if err != nil {
		return err
	}
	ours := worker.ToolSetFingerprint(reg)
	switch {
	case !ok:
		return refused("refused: version %s records no tool set (its workers are not toolgate workers, or could not write the version's metadata); --force skips the checks", buildID)
	case set.Fingerprint != ours:
		return refused("refused: version %s serves tool set %s, this binary's toolbox (--root, --allow-host) is tool set %s: give the flags of %s's workers, so drift and replay check that build", buildID, set.Fingerprint, ours, buildID)
	}

	// Drift: the calls that would move to the version are the running ones not pinned elsewhere.
	report, err := o.conn.toolgate(c, g.taskQueue, "").Drift(ctx, reg)
	if err != nil {
		return err
	}
	var moving []string
	for _, d := range report.Drifted {
		pinned, err := pinnedWorkflow(ctx, c, d.WorkflowID, d.RunID)
		if err != nil {
			return err
		}
		if !pinned {
			moving = append(moving, fmt.Sprintf("%s (%s %s)", d.WorkflowID, d.ToolName, d.Kind))
		}
	}
	if len(moving) > 0 {
		return refused("refused: %d running call(s) on task queue %s would move to version %s with another tool definition than they recorded (toolgate drift lists them): %s; let them finish first", len(moving), g.taskQueue, buildID, strings.Join(moving, ", "))
	}

	// Replay: each recorded history against this build's workflows and toolbox.
	keys, err := loadKeyring(o.conn.codecKey)
	if err != nil {
		return err
	}
	dc := dataConverter(keys)
	sdkLogger := logging.Temporal(a.logger)
	var failed []string
	for _, f := range files {
		if err := replayFile(sdkLogger, reg, dc, f); err != nil {
			failed = append(failed, fmt.Sprintf("%s: %v", f, err))
		}
	}
	if len(failed) > 0 {
		return refused("refused: %d of %d histories fail replay against version %s's tool set (toolgate replay): %s", len(failed), len(files), buildID, failed[0])
	}
	a.logger.Info("checks passed", zap.String("buildId", buildID), zap.String("toolSet", ours),
		zap.Int("runningCalls", report.Running), zap.Int("historiesReplayed", len(files)))
	return nil
}

// pinnedWorkflow reports whether the run is pinned to a version (by its behavior or an
// override), so a change of the current version does not move it.
func pinnedWorkflow(ctx context.Context, c client.Client, workflowID, runID string) (bool, error) {
	resp, err := c.DescribeWorkflowExecution(ctx, workflowID, runID)
	if err != nil {
		return false, fmt.Errorf("describe workflow %s: %w", workflowID, err)
	}
	vi := resp.GetWorkflowExecutionInfo().GetVersioningInfo()
	if o := vi.GetVersioningOverride(); o != nil {
		//lint:ignore SA1019 an override set through the deprecated API carries only Behavior
		return o.GetPinned() != nil || o.GetBehavior() == enumspb.VERSIONING_BEHAVIOR_PINNED, nil
	}
	return vi.GetBehavior() == enumspb.VERSIONING_BEHAVIOR_PINNED, nil
}

// historyFiles expands --histories: files as given, directories to their *.json files. None is
// a usage error: the replay is what makes a promotion safe.
func historyFiles(paths []string) ([]string, error) {
	var files []string
	for _, p := range paths {
		info, err := os.Stat(p)
		if err != nil {
			return nil, badInput(fmt.Errorf("--histories: %w", err))
		}
		if !info.IsDir() {
			files = append(files, p)
			continue
		}
		matches, err := filepath.Glob(filepath.Join(p, "*.json"))
		if err != nil {
			return nil, badInput(fmt.Errorf("--histories %s: %w", p, err))
		}
		files = append(files, matches...)
	}
	if len(files) == 0 {
		return nil, badInput(errors.New("refused: no recorded histories to replay: give --histories (toolgate history ID > h.json exports one), or --force"))
	}
	return files, nil
}
