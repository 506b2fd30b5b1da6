// Package approvalauth ties an approval decision to the identity the Temporal frontend
// authenticated. It is the rule a frontend authorizer applies to toolgate's approve and reject
// Workflow Updates (wire.UpdateApprove, wire.UpdateReject): the decision's Reviewer must be the
// authenticated subject, and its Groups must be groups the claim mapper vouches for.
//
// The package imports the Temporal API types only, never the server: a self-hosted server build
// calls [Check] from its authorizer (temporal.WithAuthorizer), as toolgate's embedded server does
// (cmd/toolgate/internal/reviewauth). See docs/approvals.md, "Tying a decision to an identity".
//
// Without such an authorizer, the reviewer's name and groups are what the deciding client
// asserts: anyone who may send an Update in the namespace decides under any name.
package approvalauth

import (
	"encoding/json"
	"fmt"
	"slices"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/toolgate/toolgate/wire"
)

// Identity is what the frontend authenticated: the claims' subject, and the groups the claim
// mapper vouches for (nil when it gives none).
type Identity struct {
	Subject string
	Groups  []string
}

// RefusedError is a decision the authenticated caller may not send; Reason says why.
type RefusedError struct {
	Update string // wire.UpdateApprove or wire.UpdateReject
	Reason string
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("toolgate %s update refused: %s", e.Update, e.Reason)
}

// encodingJSON is the payload encoding of a decision the SDK's default converter sends.
const encodingJSON = "json/plain"

// Check returns nil for a request that sends no approve or reject update, and for one whose
// decision names id: Reviewer equal to id.Subject and every one of Groups in id.Groups. It
// returns a *RefusedError otherwise: no authenticated caller (id nil or without a subject), a
// decision that is not one plain JSON ApprovalDecision (an encrypted payload, for one: the
// frontend cannot read it, so it cannot check it), another reviewer, or a group the claims do not
// carry. It looks at UpdateWorkflowExecution requests and at the update operations of
// ExecuteMultiOperation (update-with-start); update names are the wire names, whatever the
// workflow: on a cluster that checks decisions, approve and reject are toolgate's.
func Check(request any, id *Identity) error {
	switch r := request.(type) {
	case *workflowservice.UpdateWorkflowExecutionRequest:
		return checkUpdate(r, id)
	case *workflowservice.ExecuteMultiOperationRequest:
		for _, op := range r.GetOperations() {
			if err := checkUpdate(op.GetUpdateWorkflow(), id); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkUpdate checks one update request (nil: none).
func checkUpdate(r *workflowservice.UpdateWorkflowExecutionRequest, id *Identity) error {
	input := r.GetRequest().GetInput()
	name := input.GetName()
	if name != wire.UpdateApprove && name != wire.UpdateReject {
		return nil
	}
	refuse := func(format string, args ...any) error {
		return &RefusedError{Update: name, Reason: fmt.Sprintf(format, args...)}
	}
	if id == nil || id.Subject == "" {
		return refuse("the caller is not authenticated (send a token or client certificate the frontend maps to a subject)")
	}
	d, err := decision(input.GetArgs())
	if err != nil {
		return refuse("%v; the frontend checks the reviewer against the authenticated subject %q", err, id.Subject)
	}
	if d.Reviewer != id.Subject {
		return refuse("the decision names reviewer %q, the caller is authenticated as %q", d.Reviewer, id.Subject)
	}
	for _, g := range d.Groups {
		if !slices.Contains(id.Groups, g) {
			return refuse("the decision names group %q, which the claims of %q do not carry", g, id.Subject)
		}
	}
	return nil
}

// decision decodes the update's one argument.
func decision(args *commonpb.Payloads) (wire.ApprovalDecision, error) {
	var d wire.ApprovalDecision
	ps := args.GetPayloads()
	if len(ps) != 1 {
		return d, fmt.Errorf("the update carries %d arguments, want one decision", len(ps))
	}
	p := ps[0]
	if enc := string(p.GetMetadata()["encoding"]); enc != encodingJSON {
		return d, fmt.Errorf("the decision is encoded %q, not %s (an encrypted decision cannot be checked)", enc, encodingJSON)
	}
	// As the SDK's JSON converter decodes it in the workflow (json.Unmarshal), so both read the
	// same reviewer.
	if err := json.Unmarshal(p.GetData(), &d); err != nil {
		return d, fmt.Errorf("the decision is not an ApprovalDecision: %v", err)
	}
	return d, nil
}
