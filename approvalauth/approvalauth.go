// Package approvalauth ties what a caller says about identities to the identity the Temporal
// frontend authenticated. It holds the rules a frontend authorizer applies to two kinds of
// request:
//
//   - toolgate's approve and reject Workflow Updates (wire.UpdateApprove, wire.UpdateReject),
//     [Check]: the decision's Reviewer must be the authenticated subject, its Issuer the issuer
//     the claim mapper vouches for (none when it vouches for none), and its Groups groups the
//     claim mapper vouches for.
//   - workflow starts carrying a principal (the memo field wire.MemoPrincipal), [CheckStart]: a
//     principal marked authenticated by the frontend must be the caller's own identity; one
//     marked authenticated by toolgate mcp may only be started by a caller allowed to delegate.
//
// The package imports the Temporal API types only, never the server: a self-hosted server build
// calls [Check] and [CheckStart] from its authorizer (temporal.WithAuthorizer), as toolgate's
// embedded server does (cmd/toolgate/internal/reviewauth). See docs/approvals.md, "Tying a
// decision to an identity", and docs/principals.md, "Authenticated by the frontend".
//
// Without such an authorizer, the reviewer's name and groups, and a principal's mark, are what
// the client asserts: anyone who may send an Update or start a workflow in the namespace decides
// and calls under any name.
package approvalauth

import (
	"encoding/json"
	"fmt"
	"slices"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/toolgate/toolgate/wire"
)

// Identity is what the frontend authenticated: the claims' subject, and what the claim mapper
// vouches for beyond it.
type Identity struct {
	// Issuer is the issuer of the subject the claim mapper vouches for ("" when it vouches for
	// none: then a decision or frontend-marked principal naming an issuer is refused).
	Issuer  string
	Subject string
	// Groups are the groups the claim mapper vouches for (nil when it gives none).
	Groups []string
	// Tenant is the tenant the claim mapper vouches for ("": a frontend-marked principal naming
	// a tenant is refused).
	Tenant string
	// Delegates is true for a caller allowed to start calls for principals another component
	// authenticated (toolgate mcp's own identity): a principal marked AuthenticatedByMCP passes
	// only from such a caller.
	Delegates bool
	// Admin is true for the cluster's own and its administrators' identity (the claims' system
	// admin role): it may start calls for any principal, marked or not.
	Admin bool
}

// RefusedError is a decision or start the authenticated caller may not send; Reason says why.
type RefusedError struct {
	// Update is wire.UpdateApprove or wire.UpdateReject for a decision, "" for a start.
	Update string
	// Start names the refused start (`workflow "<type>"` or `schedule "<id>"`) for a start.
	Start  string
	Reason string
}

func (e *RefusedError) Error() string {
	if e.Update == "" {
		return fmt.Sprintf("toolgate start of %s refused: %s", e.Start, e.Reason)
	}
	return fmt.Sprintf("toolgate %s update refused: %s", e.Update, e.Reason)
}

// encodingJSON is the payload encoding of a decision the SDK's default converter sends.
const encodingJSON = "json/plain"

// Check returns nil for a request that sends no approve or reject update, and for one whose
// decision names id: Reviewer equal to id.Subject, Issuer equal to id.Issuer and every one of
// Groups in id.Groups. It returns a *RefusedError otherwise: no authenticated caller (id nil or
// without a subject), a decision that is not one plain JSON ApprovalDecision (an encrypted
// payload, for one: the frontend cannot read it, so it cannot check it), another reviewer,
// another issuer, or a group the claims do not carry. It looks at UpdateWorkflowExecution
// requests and at the update operations of ExecuteMultiOperation (update-with-start); update
// names are the wire names, whatever the workflow: on a cluster that checks decisions, approve
// and reject are toolgate's.
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
		return refuse("the decision names reviewer %q, the caller is authenticated as %q", short(d.Reviewer), id.Subject)
	}
	if d.Issuer != id.Issuer {
		return refuse("the decision names issuer %q, the claims of %q vouch for %s", short(d.Issuer), id.Subject, issuerText(id.Issuer))
	}
	for _, g := range d.Groups {
		if !slices.Contains(id.Groups, g) {
			return refuse("the decision names group %q, which the claims of %q do not carry", short(g), id.Subject)
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
