package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	tgclient "github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/wire"
)

// targetOptions name the call a command acts on: a workflow ID argument, or --call-id (with
// --scope).
type targetOptions struct {
	callID string
	scope  string
}

func addTargetFlags(cmd *cobra.Command, o *targetOptions) {
	cmd.Flags().StringVar(&o.callID, "call-id", "", "name the call by its tool call ID instead of the workflow ID")
	addScopeFlag(cmd, &o.scope)
}

// workflowID returns the workflow ID the arguments name.
func (o targetOptions) workflowID(args []string) (string, error) {
	switch {
	case len(args) == 1 && o.callID != "":
		return "", badInput(errors.New("give a workflow ID or --call-id, not both"))
	case len(args) == 1 && strings.TrimSpace(args[0]) != "":
		return args[0], nil
	case o.callID != "":
		return wire.WorkflowID(o.scope, o.callID), nil
	default:
		return "", badInput(errors.New("give the workflow ID (toolcall-<call ID>) or --call-id"))
	}
}

// openedCall is a call looked up by result, status and cancel; close releases its connection.
type openedCall struct {
	client     *tgclient.Client
	workflowID string
	ids        callIDs // for log lines
	status     tgclient.Status
	close      func()
}

// openCall names the call from args, dials the frontend and looks the call up.
func openCall(ctx context.Context, a *app, conn connOptions, target targetOptions, args []string) (openedCall, error) {
	wid, err := target.workflowID(args)
	if err != nil {
		return openedCall{}, err
	}
	c, err := conn.dial(ctx, a.logger)
	if err != nil {
		return openedCall{}, err
	}
	cl := conn.toolgate(c, "", target.scope)
	st, err := cl.StatusByWorkflowID(ctx, wid)
	if err != nil {
		c.Close()
		return openedCall{}, aboutCall(callIDs{WorkflowID: wid}, notFoundHint(err, wid))
	}
	return openedCall{
		client:     cl,
		workflowID: wid,
		ids:        callIDs{WorkflowID: wid, ToolCallID: st.ToolCallID, ToolName: st.ToolName},
		status:     st,
		close:      c.Close,
	}, nil
}

// notFoundHint adds to a not-found error a hint when the ID looks like a call ID.
func notFoundHint(err error, workflowID string) error {
	if errors.Is(err, wire.ErrNotFound) && !strings.Contains(workflowID, "toolcall-") {
		return fmt.Errorf("%w (workflow IDs look like toolcall-%s; or use --call-id %s)", err, workflowID, workflowID)
	}
	return err
}
