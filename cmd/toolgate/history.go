package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/temporalproto"
	"go.temporal.io/sdk/client"
	"go.uber.org/zap"

	"github.com/toolgate/toolgate/toolcore"
)

type historyOptions struct {
	conn   connOptions
	target targetOptions
	output string
}

func newHistoryCommand(a *app) *cobra.Command {
	var o historyOptions
	cmd := &cobra.Command{
		Use:   "history [WORKFLOW_ID]",
		Short: "Export a call's workflow history as JSON (input for replay)",
		Long: `Write the event history of a call's workflow as JSON: the format of the Temporal CLI's
"workflow show --output json" and the Web UI's download, which toolgate replay and the Go SDK's
WorkflowReplayer read. A running call's history is exported as far as it goes.

Exit codes: 0 written, 2 no such call, 5 other failure.`,
		Example: `  toolgate history toolcall-call-add-1 > add.json
  toolgate history --call-id call-add-1 -o testdata/add.json`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runHistory(cmd.Context(), a, o, args)
		},
	}
	addConnFlags(cmd, &o.conn)
	addTargetFlags(cmd, &o.target)
	cmd.Flags().StringVarP(&o.output, "output", "o", "", "write to this file instead of stdout")
	return cmd
}

func runHistory(ctx context.Context, a *app, o historyOptions, args []string) error {
	wid, err := o.target.workflowID(args)
	if err != nil {
		return err
	}
	c, err := o.conn.dial(ctx, a.logger)
	if err != nil {
		return err
	}
	defer c.Close()
	hist, err := fetchHistory(ctx, c, wid)
	if err != nil {
		return aboutCall(callIDs{WorkflowID: wid}, err)
	}
	ids := historyCallIDs(wid, hist)
	data, err := temporalproto.CustomJSONMarshalOptions{Indent: "  "}.Marshal(hist)
	if err != nil {
		return aboutCall(ids, fmt.Errorf("encode history: %w", err))
	}
	data = append(data, '\n')
	if o.output == "" {
		_, err = a.out.Write(data)
	} else {
		err = os.WriteFile(o.output, data, 0o644)
	}
	if err != nil {
		return aboutCall(ids, fmt.Errorf("write history: %w", err))
	}
	output := o.output
	if output == "" {
		output = "stdout"
	}
	a.logger.Info("history exported", append(ids.fields(), zap.Int("events", len(hist.Events)), zap.String("output", output))...)
	return nil
}

// fetchHistory reads every event of the latest run of workflowID.
func fetchHistory(ctx context.Context, c client.Client, workflowID string) (*historypb.History, error) {
	iter := c.GetWorkflowHistory(ctx, workflowID, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	hist := &historypb.History{}
	for iter.HasNext() {
		event, err := iter.Next()
		if err != nil {
			var notFound *serviceerror.NotFound
			if errors.As(err, &notFound) {
				return nil, badInput(notFoundHint(fmt.Errorf("read history of %s: no such call: %w", workflowID, err), workflowID))
			}
			return nil, fmt.Errorf("read history of %s: %w", workflowID, err)
		}
		hist.Events = append(hist.Events, event)
	}
	return hist, nil
}

// historyCallIDs reads the call's identity from the workflow input, if it is a well-formed call.
func historyCallIDs(workflowID string, hist *historypb.History) callIDs {
	ids := callIDs{WorkflowID: workflowID}
	if len(hist.Events) == 0 {
		return ids
	}
	started := hist.Events[0].GetWorkflowExecutionStartedEventAttributes()
	if payloads := started.GetInput().GetPayloads(); len(payloads) == 1 {
		if call, err := toolcore.ParseToolCall(payloads[0].GetData()); err == nil {
			ids.ToolCallID, ids.ToolName = call.ID(), call.Name()
		}
	}
	return ids
}
