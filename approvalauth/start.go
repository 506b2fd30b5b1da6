package approvalauth

import (
	"encoding/json"
	"fmt"
	"slices"

	commonpb "go.temporal.io/api/common/v1"
	schedulepb "go.temporal.io/api/schedule/v1"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// CheckStart returns nil for a request that starts no workflow carrying a principal (the memo
// field wire.MemoPrincipal), and for one whose principal the caller id may start calls for:
//
//   - unmarked (AuthenticatedBy empty): asserted, any caller; it stays marked as asserted.
//   - toolcore.AuthenticatedByFrontend: only the caller's own identity: Subject equal to
//     id.Subject, Issuer equal to id.Issuer (empty when the claims vouch for no issuer), every
//     group in id.Groups and a Tenant (if any) equal to id.Tenant. Name and Actor are asserted.
//   - toolcore.AuthenticatedByMCP: only a caller allowed to delegate (id.Delegates): toolgate
//     mcp's own identity, which sets the principal from the token it verified.
//
// A caller with id.Admin (the cluster's own identity, its administrators) passes every principal.
// It returns a *RefusedError otherwise, and for a principal memo the frontend cannot read (not
// plain JSON: an encrypted memo cannot be checked, so a cluster that checks principals needs
// them unencrypted) or that is not a principal. It looks at StartWorkflowExecution,
// SignalWithStartWorkflowExecution, the start operations of ExecuteMultiOperation, and the start
// action of CreateSchedule and UpdateSchedule (the schedule's calls run for the principal its
// writer was allowed to name), whatever the workflow type: an agent workflow's principal becomes
// its calls' principal.
func CheckStart(request any, id *Identity) error {
	switch r := request.(type) {
	case *workflowservice.StartWorkflowExecutionRequest:
		return checkStart(r, id)
	case *workflowservice.SignalWithStartWorkflowExecutionRequest:
		return checkMemo(workflowText(r.GetWorkflowType().GetName()), r.GetMemo(), id)
	case *workflowservice.ExecuteMultiOperationRequest:
		for _, op := range r.GetOperations() {
			if err := checkStart(op.GetStartWorkflow(), id); err != nil {
				return err
			}
		}
	case *workflowservice.CreateScheduleRequest:
		return checkSchedule(r.GetScheduleId(), r.GetSchedule(), id)
	case *workflowservice.UpdateScheduleRequest:
		return checkSchedule(r.GetScheduleId(), r.GetSchedule(), id)
	}
	return nil
}

// checkStart checks one start request (nil: none).
func checkStart(r *workflowservice.StartWorkflowExecutionRequest, id *Identity) error {
	if r == nil {
		return nil
	}
	return checkMemo(workflowText(r.GetWorkflowType().GetName()), r.GetMemo(), id)
}

// checkSchedule checks the start action of a schedule (nil: none).
func checkSchedule(scheduleID string, s *schedulepb.Schedule, id *Identity) error {
	start := s.GetAction().GetStartWorkflow()
	if start == nil {
		return nil
	}
	return checkMemo(fmt.Sprintf("schedule %q", short(scheduleID)), start.GetMemo(), id)
}

// checkMemo checks the principal of a start's memo, if it carries one.
func checkMemo(what string, memo *commonpb.Memo, id *Identity) error {
	payload := memo.GetFields()[wire.MemoPrincipal]
	if payload == nil {
		return nil
	}
	refuse := func(format string, args ...any) error {
		return &RefusedError{Start: what, Reason: fmt.Sprintf(format, args...)}
	}
	if enc := string(payload.GetMetadata()["encoding"]); enc != encodingJSON {
		return refuse("the memo %s is encoded %q, not %s: an encrypted principal cannot be checked", wire.MemoPrincipal, enc, encodingJSON)
	}
	// As the workflow decodes it (workflows.decodePrincipal: json.Unmarshal), so both read the
	// same principal.
	var p toolcore.Principal
	if err := json.Unmarshal(payload.GetData(), &p); err != nil {
		return refuse("the memo %s is not a principal: %v", wire.MemoPrincipal, err)
	}
	if p.AuthenticatedBy == "" || (id != nil && id.Admin) {
		return nil
	}
	if id == nil || id.Subject == "" {
		return refuse("the principal is marked authenticatedBy %q, and the caller is not authenticated (send a token or client certificate the frontend maps to a subject, or leave the mark out: the principal is then recorded as asserted)", short(p.AuthenticatedBy))
	}
	switch p.AuthenticatedBy {
	case toolcore.AuthenticatedByFrontend:
		switch {
		case p.Subject != id.Subject:
			return refuse("the principal names subject %q and is marked authenticatedBy %q, the caller is authenticated as %q", short(p.Subject), short(p.AuthenticatedBy), id.Subject)
		case p.Issuer != id.Issuer:
			return refuse("the principal names issuer %q and is marked authenticatedBy %q, the claims of %q vouch for %s", short(p.Issuer), p.AuthenticatedBy, id.Subject, issuerText(id.Issuer))
		case p.Tenant != "" && p.Tenant != id.Tenant:
			return refuse("the principal names tenant %q and is marked authenticatedBy %q, the claims of %q do not carry it", short(p.Tenant), p.AuthenticatedBy, id.Subject)
		}
		for _, g := range p.Groups {
			if !slices.Contains(id.Groups, g) {
				return refuse("the principal names group %q and is marked authenticatedBy %q, the claims of %q do not carry it", short(g), p.AuthenticatedBy, id.Subject)
			}
		}
		return nil
	case toolcore.AuthenticatedByMCP:
		if !id.Delegates {
			return refuse("the principal is marked authenticatedBy %q, and the caller %q may not delegate (only toolgate mcp's own identity may start calls for the principals it authenticated)", p.AuthenticatedBy, id.Subject)
		}
		return nil
	default:
		return refuse("the principal is marked authenticatedBy %q, which is not %q, %q or empty", short(p.AuthenticatedBy), toolcore.AuthenticatedByMCP, toolcore.AuthenticatedByFrontend)
	}
}

// workflowText names a start of workflow type name in a refusal.
func workflowText(name string) string { return fmt.Sprintf("workflow %q", short(name)) }

// issuerText is an issuer as a refusal names it.
func issuerText(issuer string) string {
	if issuer == "" {
		return "no issuer"
	}
	return fmt.Sprintf("issuer %q", issuer)
}

// short is a caller-written value as a refusal quotes it: at most 64 bytes.
func short(s string) string {
	const maxBytes = 64
	if len(s) > maxBytes {
		return s[:maxBytes] + "…"
	}
	return s
}
