package workflows

import (
	"strings"

	"go.temporal.io/sdk/workflow"

	"github.com/toolgate/toolgate/wire"
)

// callRun names the agent run a call belongs to (toolcore.CallRun): the agent workflow for its
// inline calls (they run in its history) and its child calls (their parent), the scope of a
// standalone call's workflow ID ("<scope>/toolcall-<id>"), else the call's own workflow ID. It
// reads only the workflow's info, so replays compute the same name.
func (w *Workflows) callRun(ctx workflow.Context) string {
	info := workflow.GetInfo(ctx)
	id := info.WorkflowExecution.ID
	switch {
	case w.inline:
		return id
	case info.ParentWorkflowExecution != nil:
		return info.ParentWorkflowExecution.ID
	}
	if i := strings.LastIndex(id, "/"+wire.WorkflowIDPrefix); i > 0 {
		return id[:i]
	}
	return id
}
