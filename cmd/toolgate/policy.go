package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"time"
	"unicode"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.uber.org/zap"
	"go.uber.org/zap/exp/zapslog"

	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/replay"
	"github.com/toolgate/toolgate/wire"
)

// policyFlags are the --policy flags of toolgate worker and toolgate dev.
type policyFlags struct {
	file    string
	logOnly bool
}

// Usages of --policy: a worker decides calls with it, the MCP front hides tools with it.
const (
	policyUsageWorker = "decide every call with the Cedar policy set in this file, watched for changes (docs/policy.md; default none: every call allowed)"
	policyUsageMCP    = "hide from tools/list the tools a caller's principal may never call under the Cedar policy set in this file, watched for changes (the workers decide the calls; docs/policy.md)"
)

func addPolicyFlags(cmd *cobra.Command, f *policyFlags, usage string) {
	fs := cmd.Flags()
	fs.StringVar(&f.file, "policy", "", usage)
	fs.BoolVar(&f.logOnly, "policy-log-only", false, "with --policy: record and log each decision, enforce none (hide nothing)")
	bindEnv(fs, "policy", "TOOLGATE_POLICY")
}

// source loads the policy file and watches it until ctx ends; nil without --policy.
func (f policyFlags) source(ctx context.Context, logger *zap.Logger) (*policy.Source, error) {
	if f.file == "" {
		if f.logOnly {
			return nil, badInput(errors.New("--policy-log-only needs --policy FILE"))
		}
		return nil, nil
	}
	set, err := policy.Load(f.file)
	if err != nil {
		return nil, badInput(err)
	}
	logger.Info("policy set loaded", zap.String("path", f.file), zap.String("hash", set.Hash()),
		zap.Int("policies", len(set.Policies())), zap.Bool("logOnly", f.logOnly))
	src := policy.NewSource(set, f.logOnly)
	go src.Watch(ctx, f.file, policy.DefaultWatchInterval, slog.New(zapslog.NewHandler(logger.Core())))
	return src, nil
}

type policyTestOptions struct {
	histories string
	since     string
	conn      connOptions
	taskQueue string
	toolbox   toolboxOptions
}

// maxPolicyTestCalls bounds the calls --since reads from the namespace.
const maxPolicyTestCalls = 100000

func newPolicyCommand(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "policy",
		Short: "Check a Cedar policy set, or test it against recorded calls",
		Long: `A worker started with --policy FILE decides every validated call with the Cedar policy set in
FILE before approval or scheduling: allow, deny (POLICY_DENIED, nothing runs) or hold for a
human (@effect("approve")). docs/policy.md has the entity shapes and examples.

"policy check" parses a set and validates it against toolgate's schema. "policy test" decides
the calls of recorded histories again with a candidate set and lists each call whose decision
would change.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cmd.SetOut(a.err)
			_ = cmd.Help()
			return badInput(errors.New("missing subcommand: check or test"))
		},
	}
	check := &cobra.Command{
		Use:   "check FILE",
		Short: "Parse a policy set and validate it against toolgate's entity schema",
		Long: `Parse FILE as a Cedar policy set, check toolgate's annotations (@id unique, @reason bounded,
@effect("approve") on forbids only) and validate every policy against the schema of toolgate's
entities (Toolgate::User, Toolgate::Group, Toolgate::Tool, Toolgate::Action::"call"). On success
print the set's hash (what a call's recorded decision names) and its policies.

Exit codes: 0 valid, 1 invalid (the error names the file, line and column), 2 usage.`,
		Example: `  toolgate policy check policy.cedar`,
		Args:    cobra.ExactArgs(1),
		RunE:    func(cmd *cobra.Command, args []string) error { return runPolicyCheck(a, args[0]) },
	}
	var o policyTestOptions
	test := &cobra.Command{
		Use:   "test FILE (--histories DIR | --since TIME)",
		Short: "List the recorded calls whose decision a candidate policy set would change",
		Long: `Decide each call recorded in DIR's history files (*.json, as toolgate history exports them), or
each call of --task-queue started in the namespace since TIME (RFC 3339, or a duration back from
now such as 24h; at most 100,000 calls, newest first), again with the candidate set in FILE, and
print one line per call whose decision would change:

  CHANGED <file, or "namespace"> <workflow ID> <tool> <principal>: <recorded> -> <candidate>

A decision is "allow", "deny <policy ID>" or "approve <policy ID>"; a call recorded without a
decision (its worker had no policy) counts as "allow"; a change of effect is listed, the same
effect by another policy is not. The principal comes from the call's recorded memo, the tool
from its input and the validated arguments from its ExecuteTool input (a call that scheduled
none is validated again with this binary's toolbox, as --root and --allow-host configure it). Calls that never reached the policy step (an unknown tool,
rejected arguments) and histories of other workflows are skipped. Nothing runs, and no server
is needed for --histories.

Exit codes: 0 no decision changes, 1 at least one would, 2 usage, 5 the namespace could not be
read.`,
		Example: `  toolgate policy test new.cedar --histories ./histories
  toolgate policy test new.cedar --since 24h`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runPolicyTest(cmd.Context(), a, o, args[0]) },
	}
	test.Flags().StringVar(&o.histories, "histories", "", "directory of exported call histories (*.json)")
	test.Flags().StringVar(&o.since, "since", "", "decide the namespace's calls started since this time (RFC 3339, or a duration back from now such as 24h)")
	addToolboxFlags(test, &o.toolbox)
	addConnFlags(test, &o.conn)
	addTaskQueueFlag(test, &o.taskQueue)
	cmd.AddCommand(check, test)
	return cmd
}

func runPolicyCheck(a *app, file string) error {
	set, err := policy.Load(file)
	if err == nil {
		err = set.Validate()
	}
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return badInput(err)
		}
		return &exitError{code: ExitErrorResult, err: err}
	}
	fmt.Fprintf(a.out, "OK %s\n", set)
	for _, p := range set.Policies() {
		fmt.Fprintf(a.out, "  line %d: %s %s\n", p.Line, p.Effect, p.ID)
	}
	return nil
}

func runPolicyTest(ctx context.Context, a *app, o policyTestOptions, file string) error {
	if (o.histories == "") == (o.since == "") {
		return badInput(errors.New("give one of --histories DIR and --since TIME"))
	}
	var since time.Time
	if o.since != "" {
		var err error
		if since, err = parseSince(o.since, time.Now()); err != nil {
			return badInput(err)
		}
	}
	set, err := policy.Load(file)
	if err != nil {
		return badInput(err)
	}
	reg, err := o.toolbox.registry(nil)
	if err != nil {
		return err
	}
	decided, changed := 0, 0
	decide := func(source string, rc replay.RecordedCall) {
		tool, found := reg.Get(rc.Call.Name())
		if !found {
			return // TOOL_NOT_FOUND: the policy step was never reached
		}
		accepted := rc.Accepted
		if accepted == nil {
			var valid bool
			if accepted, _, valid = tool.Validate(rc.Call); !valid {
				return // rejected arguments: the policy step was never reached
			}
		}
		decided++
		old := "allow"
		if rc.Decision != nil {
			old = decisionText(*rc.Decision)
		}
		d := set.Evaluate(policy.Request{Principal: rc.Principal, Tool: policy.ToolOf(tool), Arguments: accepted})
		// A change of effect counts; the same effect by another policy does not.
		if now := decisionText(d); effectOf(now) != effectOf(old) {
			changed++
			who := "anonymous"
			if rc.Principal != nil {
				who = rc.Principal.Key()
			}
			fmt.Fprintf(a.out, "CHANGED %s %s %s %s: %s -> %s\n", quoteField(source), quoteField(rc.WorkflowID), quoteField(rc.Call.Name()), quoteField(who), old, now)
		}
	}
	if o.histories != "" {
		err = decideHistoryFiles(a, o, decide)
	} else {
		err = decideNamespaceCalls(ctx, a, o, since, decide)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(a.err, "%d calls decided, %d would change (%s)\n", decided, changed, set.Hash())
	if changed > 0 {
		return &exitError{code: ExitErrorResult}
	}
	return nil
}

// parseSince reads --since: an RFC 3339 time, or a duration back from now.
func parseSince(s string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return time.Time{}, fmt.Errorf("--since %q: want an RFC 3339 time or a positive duration such as 24h", s)
	}
	return now.Add(-d), nil
}

// decideHistoryFiles decides the calls of --histories' files, in name order.
func decideHistoryFiles(a *app, o policyTestOptions, decide func(string, replay.RecordedCall)) error {
	keys, err := loadKeyring(o.conn.codecKey)
	if err != nil {
		return err
	}
	dc := dataConverter(keys)
	files, err := filepath.Glob(filepath.Join(o.histories, "*.json"))
	if err != nil {
		return badInput(err)
	}
	if len(files) == 0 {
		return badInput(fmt.Errorf("--histories %s: no *.json files", o.histories))
	}
	slices.Sort(files)
	for _, f := range files {
		rc, ok, err := readRecordedCall(f, dc)
		if err != nil {
			a.logger.Warn("skipping a history", zap.String("file", f), zap.Error(err))
			continue
		}
		if ok {
			decide(filepath.Base(f), rc)
		}
	}
	return nil
}

// decideNamespaceCalls decides the calls of --task-queue started since since, newest first.
func decideNamespaceCalls(ctx context.Context, a *app, o policyTestOptions, since time.Time, decide func(string, replay.RecordedCall)) error {
	c, err := o.conn.dial(ctx, a.logger)
	if err != nil {
		return err
	}
	defer c.Close()
	dc, err := o.conn.dataConverter(a.logger)
	if err != nil {
		return err
	}
	tg := o.conn.toolgate(c, o.taskQueue, "")
	var token []byte
	for read := 0; read < maxPolicyTestCalls; {
		calls, next, err := tg.ListCalls(ctx, 100, token)
		if err != nil {
			return err
		}
		for _, call := range calls {
			if call.Started.Before(since) {
				return nil // newest first: the rest are older
			}
			read++
			hist, err := tg.History(ctx, call.WorkflowID, call.RunID)
			if err != nil {
				return err
			}
			rc, err := replay.ReadCall(hist, dc)
			if err != nil {
				a.logger.Warn("skipping a call", zap.String("workflowId", call.WorkflowID), zap.Error(err))
				continue
			}
			if !rc.Call.IsZero() {
				decide("namespace", rc)
			}
		}
		if next == nil {
			return nil
		}
		token = next
	}
	a.logger.Warn("stopped after the most recent calls", zap.Int("calls", maxPolicyTestCalls))
	return nil
}

// readRecordedCall reads a ToolCallWorkflow history file; ok is false for other workflows.
func readRecordedCall(file string, dc converter.DataConverter) (replay.RecordedCall, bool, error) {
	f, err := os.Open(file)
	if err != nil {
		return replay.RecordedCall{}, false, err
	}
	defer f.Close()
	hist, err := client.HistoryFromJSON(f, client.HistoryJSONOptions{})
	if err != nil {
		return replay.RecordedCall{}, false, fmt.Errorf("decode history: %w", err)
	}
	if len(hist.GetEvents()) == 0 || hist.GetEvents()[0].GetWorkflowExecutionStartedEventAttributes().GetWorkflowType().GetName() != wire.ToolCallWorkflowName {
		return replay.RecordedCall{}, false, nil
	}
	rc, err := replay.ReadCall(hist, dc)
	if err != nil {
		return rc, false, err
	}
	return rc, !rc.Call.IsZero(), nil
}

// decisionText is "allow", "deny <id>" or "approve <id>" ("deny" alone: no policy permits).
func decisionText(d policy.Decision) string {
	if d.Effect == "" || d.Effect == wire.PolicyAllow || d.PolicyID == "" {
		if d.Effect == "" {
			return wire.PolicyAllow
		}
		return d.Effect
	}
	return d.Effect + " " + quoteField(d.PolicyID)
}

// effectOf is the effect of a decisionText.
func effectOf(text string) string {
	for i, r := range text {
		if r == ' ' {
			return text[:i]
		}
	}
	return text
}

// quoteField quotes s when it holds anything but printable, space-free text (a principal or
// policy ID comes from a history or a file and reaches a terminal).
func quoteField(s string) string {
	for _, r := range s {
		if r == ' ' || r == '"' || !unicode.IsPrint(r) {
			return fmt.Sprintf("%q", s)
		}
	}
	if s == "" {
		return `""`
	}
	return s
}
