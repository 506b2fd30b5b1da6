package main

import (
	"context"
	"errors"

	"github.com/spf13/cobra"

	"github.com/toolgate/toolgate/wire"
)

type resultOptions struct {
	conn   connOptions
	target targetOptions
}

func newResultCommand(a *app) *cobra.Command {
	var o resultOptions
	cmd := &cobra.Command{
		Use:   "result [WORKFLOW_ID]",
		Short: "Wait for a call and print its result message",
		Long: `Print the tool-result message JSON of a call on stdout, waiting while it runs.
Name the call by its workflow ID (toolcall-<call ID>, as call --detach prints) or --call-id.

Exit codes as for call: 0 isError false, 1 isError true, 2 no such call, 3 fatal
NonRecoverableToolError, 4 the call was canceled, 5 other failure (also when Ctrl-C stops the
waiting: the call itself goes on).`,
		Example: `  toolgate result toolcall-call-add-1
  toolgate result --call-id call-add-1`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runResult(cmd.Context(), a, o, args)
		},
	}
	addConnFlags(cmd, &o.conn)
	addTargetFlags(cmd, &o.target)
	return cmd
}

func runResult(ctx context.Context, a *app, o resultOptions, args []string) error {
	call, err := openCall(ctx, a, o.conn, o.target, args)
	if err != nil {
		return err
	}
	defer call.close()
	ids := call.ids
	res, err := call.client.ResultByWorkflowID(ctx, call.workflowID)
	if err != nil {
		if ctx.Err() != nil && !errors.Is(err, wire.ErrCallCanceled) {
			return aboutCall(ids, &exitError{code: ExitFailure, err: errors.New("stopped waiting; the call goes on")})
		}
		return aboutCall(ids, err)
	}
	return printResult(a, a.logger.With(ids.fields()...), res)
}
