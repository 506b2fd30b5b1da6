package main

import (
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"
)

type driftOptions struct {
	toolbox   toolboxOptions
	conn      connOptions
	taskQueue string
	json      bool
}

func newDriftCommand(a *app) *cobra.Command {
	var o driftOptions
	cmd := &cobra.Command{
		Use:   "drift",
		Short: "Report running calls whose tool definition differs in this build",
		Long: `Compare the running calls on --task-queue with this build's toolbox (with --root and
--allow-host as the worker would use them). Each call records in its history, when its tool is
scheduled, the tool's definition hash (sha256 of name, input schema and side-effect options; see
"toolgate tools --json"). A call whose recorded hash differs from this build's is reported as
"changed", one whose tool this build lacks as "removed", one recorded before hashes were as
"unrecorded". Deploying a build with changed definitions while such calls run risks
non-determinism on replay and retries running the new code: drain them first, or keep the
definition.

--json prints {"running":N,"scheduled":N,"drifted":[{"workflowId","runId","toolCallId",
"toolName","kind","recordedHash","currentHash"}]}.

Exit code 0 when nothing drifted, 1 when some call did, 5 on other failures.`,
		Example: `  toolgate drift
  toolgate drift --address temporal:7233 --task-queue toolgate --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runDrift(cmd.Context(), a, o)
		},
	}
	addToolboxFlags(cmd, &o.toolbox)
	addConnFlags(cmd, &o.conn)
	addTaskQueueFlag(cmd, &o.taskQueue)
	cmd.Flags().BoolVar(&o.json, "json", false, "print one JSON object")
	return cmd
}

type driftJSON struct {
	Running   int               `json:"running"`
	Scheduled int               `json:"scheduled"`
	Drifted   []driftedCallJSON `json:"drifted"`
}

type driftedCallJSON struct {
	WorkflowID   string `json:"workflowId"`
	RunID        string `json:"runId"`
	ToolCallID   string `json:"toolCallId"`
	ToolName     string `json:"toolName"`
	Kind         string `json:"kind"`
	RecordedHash string `json:"recordedHash"`
	CurrentHash  string `json:"currentHash"`
}

func runDrift(ctx context.Context, a *app, o driftOptions) error {
	reg, err := o.toolbox.registry(nil)
	if err != nil {
		return err
	}
	c, err := o.conn.dial(ctx, a.logger)
	if err != nil {
		return err
	}
	defer c.Close()
	report, err := o.conn.toolgate(c, o.taskQueue, "").Drift(ctx, reg)
	if err != nil {
		return err
	}
	out := driftJSON{Running: report.Running, Scheduled: report.Scheduled, Drifted: []driftedCallJSON{}}
	for _, d := range report.Drifted {
		out.Drifted = append(out.Drifted, driftedCallJSON{
			WorkflowID: d.WorkflowID, RunID: d.RunID, ToolCallID: d.ToolCallID, ToolName: d.ToolName,
			Kind: d.Kind.String(), RecordedHash: d.RecordedHash, CurrentHash: d.CurrentHash,
		})
	}
	if o.json {
		err = writeJSON(a.out, out)
	} else {
		tw := tabwriter.NewWriter(a.out, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "%d running, %d scheduled, %d drifted\n", out.Running, out.Scheduled, len(out.Drifted))
		if len(out.Drifted) > 0 {
			fmt.Fprintln(tw, "WORKFLOW ID\tTOOL\tKIND\tRECORDED\tTHIS BUILD")
			for _, d := range out.Drifted {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", d.WorkflowID, d.ToolName, d.Kind, orDash(d.RecordedHash), orDash(d.CurrentHash))
			}
		}
		err = tw.Flush()
	}
	if err != nil {
		return err
	}
	if len(out.Drifted) > 0 {
		return &exitError{code: ExitErrorResult} // the report above says which

	}
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
