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
	parts  string         // --parts: where to write the parts' bytes
	store  partStoreFlags // parts.go
}

func newResultCommand(a *app) *cobra.Command {
	var o resultOptions
	cmd := &cobra.Command{
		Use:   "result [WORKFLOW_ID]",
		Short: "Wait for a call and print its result message",
		Long: `Print the tool-result message JSON of a call on stdout, waiting while it runs.
Name the call by its workflow ID (toolcall-<call ID>, as call --detach prints) or --call-id.

A rich result records claims of its parts (images, audio, resources: type, size, sha256), never
their bytes; --parts DIR writes each part's bytes to DIR/part-<index><ext>, read from the part
store (--part-store, default toolgate dev's) and checked against its sha256.

Exit codes as for call: 0 isError false, 1 isError true, 2 no such call, 3 fatal
NonRecoverableToolError, 4 the call was canceled, 5 other failure (also when Ctrl-C stops the
waiting, or a part cannot be written: the call itself goes on).`,
		Example: `  toolgate result toolcall-call-add-1
  toolgate result --call-id call-add-1
  toolgate result --call-id call-report-1 --parts ./report-parts`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runResult(cmd.Context(), a, o, args)
		},
	}
	addConnFlags(cmd, &o.conn)
	addTargetFlags(cmd, &o.target)
	cmd.Flags().StringVar(&o.parts, "parts", "", "write the bytes of the result's parts to this directory (created 0700), each as part-<index><ext>")
	o.store.DefaultDir, o.store.OnlyExisting = readerPartStoreDir(a.lookupEnv), true
	addPartStoreFlags(cmd, a, &o.store, "(default toolgate dev's: $TOOLGATE_DATA_DIR/parts, else ~/.local/share/toolgate/parts)")
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
	logger := a.logger.With(ids.fields()...)
	printed := printResult(a, logger, res)
	if o.parts == "" || len(res.Parts()) == 0 {
		return printed
	}
	keys, err := o.conn.keys.open(o.conn.codecKey, a.logger)
	if err != nil {
		return err
	}
	store, closer, err := o.store.open(ctx, credentialKeys(keys))
	if err != nil {
		return err
	}
	defer closer.Close()
	return errors.Join(writeParts(ctx, logger, store, res, o.parts), printed)
}
