package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	historypb "go.temporal.io/api/history/v1"
	"go.uber.org/zap"

	tgclient "github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/internal/principalmemo"
	"github.com/toolgate/toolgate/internal/safetext"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
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
	hist, err := o.conn.toolgate(c, "", "").History(ctx, wid, "")
	if errors.Is(err, wire.ErrNotFound) {
		err = badInput(notFoundHint(fmt.Errorf("read history of %s: no such call: %w", wid, err), wid))
	}
	if err != nil {
		return aboutCall(callIDs{WorkflowID: wid}, err)
	}
	ids := historyCallIDs(wid, hist)
	data, err := tgclient.HistoryJSON(hist)
	if err != nil {
		return aboutCall(ids, err)
	}
	if o.output == "" {
		data, _ = safetext.JSON(data) // failure messages carry model text: the same JSON, escaped
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
	fields := append(ids.fields(), zap.Int("events", len(hist.Events)), zap.String("output", output))
	if p, ok := historyPrincipal(hist, o.conn); ok {
		fields = append(fields, zap.String("principal", principalText(p)))
	}
	a.logger.Info("history exported", fields...)
	return nil
}

// historyPrincipal reads whom the call ran for from its start's memo, if it has a readable one.
func historyPrincipal(hist *historypb.History, conn connOptions) (toolcore.Principal, bool) {
	dc, err := conn.dataConverter(nil)
	if len(hist.Events) == 0 || err != nil {
		return toolcore.Principal{}, false
	}
	p, err := principalmemo.Read(hist.Events[0].GetWorkflowExecutionStartedEventAttributes().GetMemo(), dc)
	if p == nil || err != nil {
		return toolcore.Principal{}, false
	}
	return *p, true
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
