package main

import (
	"context"

	"github.com/spf13/cobra"
	"go.uber.org/zap"

	tgclient "github.com/toolgate/toolgate/client"
)

type cancelOptions struct {
	conn   connOptions
	target targetOptions
}

func newCancelCommand(a *app) *cobra.Command {
	var o cancelOptions
	cmd := &cobra.Command{
		Use:   "cancel [WORKFLOW_ID]",
		Short: "Ask a running call to stop",
		Long: `Request cancellation of a running call. The tool's context is canceled (at once where the
namespace pushes cancellation to workers, else at the tool's next heartbeat, within 5 s by
default; docs/operations.md), the workflow waits for the tool to stop and ends canceled: result
then exits 4. cancel returns once the request is recorded; it does not wait for the tool.
Canceling a call that has already ended changes nothing and is not an error.

Exit codes: 0 requested (or already ended), 2 no such call, 5 other failure.`,
		Example: `  id=$(toolgate call sleep '{"seconds":600}' --detach)
  toolgate cancel "$id"
  toolgate result "$id"   # exit code 4`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCancel(cmd.Context(), a, o, args)
		},
	}
	addConnFlags(cmd, &o.conn)
	addTargetFlags(cmd, &o.target)
	return cmd
}

func runCancel(ctx context.Context, a *app, o cancelOptions, args []string) error {
	call, err := openCall(ctx, a, o.conn, o.target, args)
	if err != nil {
		return err
	}
	defer call.close()
	logger := a.logger.With(call.ids.fields()...)
	if call.status.State != tgclient.Running {
		logger.Info("call already ended; nothing to cancel", zap.Stringer("state", call.status.State))
		return nil
	}
	if err := call.client.CancelByWorkflowID(ctx, call.workflowID); err != nil {
		return aboutCall(call.ids, err)
	}
	logger.Info("cancellation requested")
	return nil
}
