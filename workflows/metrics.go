package workflows

import (
	"errors"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// Metrics the workflow emits through the worker client's MetricsHandler (client.Options), with
// the SDK's tags (namespace, task_queue, workflow_type) plus the ones named here. They are
// recorded through workflow.GetMetricsHandler, which records nothing while a history replays, so
// a call is counted when its workflow task first runs the completion, not again on a cache miss.
// A workflow task that fails after counting (worker crash before the task completes) is run again
// and counts again: the counts are at least once, exact in the absence of worker loss.
const (
	// MetricToolCalls counts calls by outcome. Labels: tool, outcome (a ToolOutcome value).
	MetricToolCalls = "toolgate_tool_calls_total"
	// MetricToolCallDuration is the time from the workflow's start to its outcome, in seconds, as
	// a histogram. Label: tool.
	MetricToolCallDuration = "toolgate_tool_call_duration_seconds"
	// MetricValidationRejections counts calls the validator rejected (TOOL_ARGUMENTS_INVALID) or
	// failed (TOOL_VALIDATION_FAILED). Labels: tool, code.
	MetricValidationRejections = "toolgate_validation_rejections_total"
	// MetricHeartbeatTimeouts counts calls whose last activity attempt ended in a heartbeat
	// timeout (worker lost or stalled). Label: tool.
	MetricHeartbeatTimeouts = "toolgate_heartbeat_timeouts_total"
	// MetricApprovalsRequested and MetricApprovalsDecided count calls that started waiting for an
	// approval and calls whose wait ended (approved, rejected, expired or canceled); approvals
	// waiting = requested - decided (a gauge cannot be summed across workflows on many
	// workers). Label: tool.
	MetricApprovalsRequested = "toolgate_approvals_requested_total"
	MetricApprovalsDecided   = "toolgate_approvals_decided_total"
	// MetricApprovalsEdited counts approved calls a reviewer edited (ApprovalDecision.Arguments).
	MetricApprovalsEdited = "toolgate_approvals_edited_total"
	// MetricApprovalsRefusedReviewer counts decisions the update validator refused because the
	// tool's Options.Reviewers does not name the reviewer (or a group of theirs).
	MetricApprovalsRefusedReviewer = "toolgate_approvals_refused_reviewer_total"
	// MetricCompensations counts the steps of undos (Undo, UndoWorkflow), one per effect
	// attempted. Labels: tool, outcome (a wire.UndoStatus: compensated, skipped, notFound,
	// unresolved, failed).
	MetricCompensations = "toolgate_compensations_total"

	// MetricLabelTool, MetricLabelOutcome and MetricLabelCode are the label names.
	MetricLabelTool    = "tool"
	MetricLabelOutcome = "outcome"
	MetricLabelCode    = "code"
	// MetricToolUnknown is the tool label of a call whose name is not a registered tool (or no
	// call at all): the model chooses unknown names, and an unbounded label would grow the
	// metrics without limit. Parentheses cannot appear in a tool name, so it never collides.
	MetricToolUnknown = "(unknown)"
)

// metricTool is the tool label for call: its name when registered, else MetricToolUnknown.
func (w *Workflows) metricTool(call toolcore.ToolCall) string {
	if call.IsZero() {
		return MetricToolUnknown
	}
	if _, ok := w.Registry.Get(call.Name()); !ok {
		return MetricToolUnknown
	}
	return call.Name()
}

// countOutcome records the call's final outcome and duration, once per call. awaiting_approval is
// not an end (the call goes on to its final outcome, counted then): it is only a search attribute
// value, so an approved call counts once, as ok.
func (w *Workflows) countOutcome(ctx workflow.Context, call toolcore.ToolCall, outcome string) {
	if outcome == wire.OutcomeAwaitingApproval {
		return
	}
	tool := w.metricTool(call)
	h := workflow.GetMetricsHandler(ctx).WithTags(map[string]string{MetricLabelTool: tool})
	h.WithTags(map[string]string{MetricLabelOutcome: outcome}).Counter(MetricToolCalls).Inc(1)
	h.Timer(MetricToolCallDuration).Record(workflow.Now(ctx).Sub(callStart(ctx)))
}

// countRejection records a validator's rejection or failure.
func (w *Workflows) countRejection(ctx workflow.Context, call toolcore.ToolCall, rejected toolcore.Result) {
	workflow.GetMetricsHandler(ctx).WithTags(map[string]string{
		MetricLabelTool: w.metricTool(call), MetricLabelCode: rejected.ErrorCode().String(),
	}).Counter(MetricValidationRejections).Inc(1)
}

// countActivityFailure records a heartbeat timeout among the ways an ExecuteTool can fail.
func (w *Workflows) countActivityFailure(ctx workflow.Context, call toolcore.ToolCall, err error) {
	var timeoutErr *temporal.TimeoutError
	if errors.As(err, &timeoutErr) && timeoutErr.TimeoutType() == enumspb.TIMEOUT_TYPE_HEARTBEAT {
		workflow.GetMetricsHandler(ctx).WithTags(map[string]string{MetricLabelTool: w.metricTool(call)}).
			Counter(MetricHeartbeatTimeouts).Inc(1)
	}
}

// countApproval records a call starting (MetricApprovalsRequested) or ending
// (MetricApprovalsDecided) its wait for an approval.
func (w *Workflows) countApproval(ctx workflow.Context, call toolcore.ToolCall, metric string) {
	workflow.GetMetricsHandler(ctx).WithTags(map[string]string{MetricLabelTool: w.metricTool(call)}).
		Counter(metric).Inc(1)
}
