package replay

import (
	"encoding/json"
	"fmt"
	"strings"

	commonpb "go.temporal.io/api/common/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/converter"

	"github.com/toolgate/toolgate/activities"
	"github.com/toolgate/toolgate/internal/principalmemo"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// RecordedCall is what a ToolCallWorkflow history recorded of its call: enough to decide it again
// with another policy set (`toolgate policy test`).
type RecordedCall struct {
	// WorkflowID is the call's workflow ID (its idempotency key).
	WorkflowID string
	// Call is the snapshot of the workflow's input.
	Call toolcore.ToolCall
	// Principal is the start's principal memo; nil when it has none.
	Principal *toolcore.Principal
	// Accepted is the validated arguments of the first ExecuteTool the call scheduled; nil when
	// it scheduled none (denied, rejected, unknown tool): validate Call again to get them.
	Accepted json.RawMessage
	// Decision is the policy decision the call recorded; nil when it recorded none (its worker
	// had no policy: the call was allowed).
	Decision *wire.PolicyDecision
}

// The SDK's marker of a MutableSideEffect and the names of its details (sdk internal
// internal_command_state_machine.go): the data detail is the payloads [ID, payloads of the value].
const (
	mutableSideEffectMarker = "MutableSideEffect"
	sideEffectIDDetail      = "side-effect-id"
	sideEffectDataDetail    = "data"
)

// ReadCall reads the RecordedCall of a ToolCallWorkflow history h, decoding payloads with dc
// (nil: the SDK's default converter).
func ReadCall(h *historypb.History, dc converter.DataConverter) (RecordedCall, error) {
	if dc == nil {
		dc = converter.GetDefaultDataConverter()
	}
	events := h.GetEvents()
	if len(events) == 0 {
		return RecordedCall{}, fmt.Errorf("history has no events")
	}
	start := events[0].GetWorkflowExecutionStartedEventAttributes()
	if name := start.GetWorkflowType().GetName(); name != wire.ToolCallWorkflowName {
		return RecordedCall{}, fmt.Errorf("workflow type %q is not %s", name, wire.ToolCallWorkflowName)
	}
	rc := RecordedCall{WorkflowID: start.GetWorkflowId()}
	if payloads := start.GetInput().GetPayloads(); len(payloads) > 0 {
		var raw json.RawMessage
		if err := dc.FromPayload(payloads[0], &raw); err != nil {
			return rc, fmt.Errorf("decode the call: %w", err)
		}
		call, err := toolcore.ParseToolCall(raw)
		if err != nil {
			return rc, fmt.Errorf("the recorded call does not parse: %w", err)
		}
		rc.Call = call
	}
	principal, err := principalmemo.Read(start.GetMemo(), dc)
	if err != nil {
		return rc, err
	}
	rc.Principal = principal
	policyMarker := wire.ChangePolicy + "/" + rc.Call.ID() + "_"
	for _, e := range events {
		if a := e.GetActivityTaskScheduledEventAttributes(); a != nil && rc.Accepted == nil && a.GetActivityType().GetName() == wire.ExecuteToolName {
			var in activities.ExecuteToolInput
			if payloads := a.GetInput().GetPayloads(); len(payloads) > 0 {
				if err := dc.FromPayload(payloads[0], &in); err != nil {
					return rc, fmt.Errorf("decode the ExecuteTool input: %w", err)
				}
				rc.Accepted = in.Accepted
			}
		}
		m := e.GetMarkerRecordedEventAttributes()
		if m == nil || m.GetMarkerName() != mutableSideEffectMarker || rc.Decision != nil {
			continue
		}
		var id string
		if err := dc.FromPayloads(m.GetDetails()[sideEffectIDDetail], &id); err != nil || !strings.HasPrefix(id, policyMarker) {
			continue
		}
		var dataID string
		var contents commonpb.Payloads
		if err := dc.FromPayloads(m.GetDetails()[sideEffectDataDetail], &dataID, &contents); err != nil {
			return rc, fmt.Errorf("decode the policy marker: %w", err)
		}
		var d wire.PolicyDecision
		if err := dc.FromPayloads(&contents, &d); err != nil {
			return rc, fmt.Errorf("decode the policy decision: %w", err)
		}
		rc.Decision = &d
	}
	return rc, nil
}
