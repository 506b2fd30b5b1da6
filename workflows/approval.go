package workflows

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"go.temporal.io/sdk/workflow"

	"github.com/toolgate/toolgate/internal/safetext"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// approval is the state of one call's wait for a human decision. Update validators read it;
// only the update handlers and awaitApproval write it.
type approval struct {
	state wire.ApprovalState
	tool  toolcore.Tool
	// budget bounds the validator of an edit (as the original's).
	budget func() budget
	// edited is the call as the reviewer who approved it edited it, if they did.
	edited *edit
}

// edit is a reviewer's edited call: snapshotted and validated like the model's.
type edit struct {
	call     toolcore.ToolCall
	accepted json.RawMessage
	reviewer string
}

// awaitApproval holds a call whose tool needs approval until a reviewer decides, the approval
// timeout passes, or the call is canceled. approved is true when the tool may run; otherwise the
// call ends with (res, err): TOOL_APPROVAL_REJECTED, TOOL_APPROVAL_EXPIRED or canceled. asked is
// the policy decision that asked for the approval, nil when the tool's own rule did; the state
// and the details show it to the reviewer.
//
// The wait is durable: the state lives in history (the timer, the accepted update with its
// decision), so worker and server restarts change nothing. Histories recorded before approvals
// existed take the DefaultVersion branch and run the tool as they did.
//
// A reviewer may approve edited arguments (ApprovalDecision.Arguments): the validator refuses an
// edit that does not snapshot or validate; an accepted one is returned as edited, and the tool
// runs with it.
func (w *Workflows) awaitApproval(ctx workflow.Context, call toolcore.ToolCall, tool toolcore.Tool, asked *wire.PolicyDecision) (approved bool, edited *edit, res toolcore.Result, err error) {
	if workflow.GetVersion(ctx, wire.ChangeApproval, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return true, nil, toolcore.Result{}, nil
	}
	timeout := tool.Options().ApprovalTimeout
	a := &approval{state: wire.ApprovalState{
		ToolCallID:     call.ID(),
		ToolName:       call.Name(),
		Arguments:      call.Arguments().Raw(),
		CallHash:       toolcore.CallHash(tool, call),
		DefinitionHash: tool.DefinitionHash(),
		Since:          workflow.Now(ctx).UTC(),
		Deadline:       workflow.Now(ctx).Add(timeout),
		Waiting:        true,
		Policy:         asked,
	}, tool: tool, budget: func() budget { return newBudget(w.validateTimeout()) }}
	if err := a.register(ctx); err != nil {
		// Only a programming error (a duplicate name, a bad handler) fails here.
		return false, nil, toolcore.Result{}, err
	}
	workflow.SetCurrentDetails(ctx, a.waitingDetails(workflow.GetInfo(ctx).WorkflowExecution.ID))
	w.upsertOutcome(ctx, call, wire.OutcomeAwaitingApproval)
	w.countApproval(ctx, call, MetricApprovalsRequested)

	// The timer's summary is what the UI's timeline shows of the wait (not compared on replay).
	decided, err := workflow.AwaitWithOptions(ctx, workflow.AwaitOptions{
		Timeout:      timeout,
		TimerOptions: workflow.TimerOptions{Summary: a.timerSummary()},
	}, func() bool { return a.state.Decision != nil })
	a.state.Waiting = false
	w.countApproval(ctx, call, MetricApprovalsDecided)
	switch {
	case err != nil || ctx.Err() != nil:
		res, err := w.canceled(ctx, call)
		return false, nil, res, err
	case !decided:
		res, err := w.complete(ctx, call, toolcore.ApprovalExpiredResult(call, timeout))
		return false, nil, res, err
	case a.state.Decision.Decision != wire.DecisionApproved:
		d := a.state.Decision
		res, err := w.complete(ctx, call, toolcore.ApprovalRejectedResult(call, d.Reviewer, d.Reason))
		return false, nil, res, err
	}
	w.clearOutcome(ctx)
	if a.edited != nil {
		w.countApproval(ctx, call, MetricApprovalsEdited)
		return true, a.edited, toolcore.Result{}, nil
	}
	return true, nil, toolcore.Result{}, nil
}

// clearOutcome unsets ToolOutcome once an approved call goes on to run: it no longer waits, and
// its outcome is upserted when it ends.
func (w *Workflows) clearOutcome(ctx workflow.Context) {
	if !w.SearchAttributes {
		return
	}
	if err := workflow.UpsertTypedSearchAttributes(ctx, toolOutcomeKey().ValueUnset()); err != nil {
		workflow.GetLogger(ctx).Warn("Unset ToolOutcome", "error", err)
	}
}

// register installs the query and the two update handlers.
func (a *approval) register(ctx workflow.Context) error {
	if err := workflow.SetQueryHandler(ctx, wire.QueryApproval, func() (wire.ApprovalState, error) {
		return a.state, nil
	}); err != nil {
		return err
	}
	for _, u := range []struct{ name, decision string }{
		{wire.UpdateApprove, wire.DecisionApproved},
		{wire.UpdateReject, wire.DecisionRejected},
	} {
		name, decision := u.name, u.decision
		err := workflow.SetUpdateHandlerWithOptions(ctx, name,
			func(ctx workflow.Context, d wire.ApprovalDecision) (wire.ApprovalRecord, error) {
				return a.decide(ctx, decision, d)
			},
			workflow.UpdateHandlerOptions{
				Validator: func(ctx workflow.Context, d wire.ApprovalDecision) error {
					err := a.check(decision, d)
					if errors.Is(err, errReviewerNotAllowed) {
						workflow.GetMetricsHandler(ctx).WithTags(map[string]string{MetricLabelTool: a.state.ToolName}).
							Counter(MetricApprovalsRefusedReviewer).Inc(1)
					}
					return err
				},
				Description: "decide the waiting call: " + decision + "; the argument " +
					`{"callHash":"sha256:...","reviewer":"...","reason":"..."} must name the call's hash (query "approval")` +
					map[bool]string{true: `; "arguments":{...} approves edited arguments`}[decision == wire.DecisionApproved],
			})
		if err != nil {
			return err
		}
	}
	return nil
}

// Refusals of the update validator.
var (
	errNotWaiting    = errors.New("the call is not waiting for approval")
	errBlankReviewer = errors.New(`"reviewer" must name who decides`)
)

// check is the update validator: it refuses a decision for another call (hash), without a
// reviewer, or once the call no longer waits. It only reads the state.
func (a *approval) check(decision string, d wire.ApprovalDecision) error {
	switch {
	case !a.state.Waiting || a.state.Decision != nil:
		return errNotWaiting
	case d.CallHash != a.state.CallHash:
		return fmt.Errorf("the decision names call hash %s, the waiting call's is %s: the call or the tool definition differs from what was reviewed",
			quote(d.CallHash), a.state.CallHash)
	case strings.TrimSpace(d.Reviewer) == "":
		return errBlankReviewer
	case len(d.Reviewer) > wire.MaxReviewerBytes:
		return fmt.Errorf(`"reviewer" has %d bytes, limit %d`, len(d.Reviewer), wire.MaxReviewerBytes)
	case len(d.Issuer) > wire.MaxReviewerBytes:
		return fmt.Errorf(`"issuer" has %d bytes, limit %d`, len(d.Issuer), wire.MaxReviewerBytes)
	case len(d.Reason) > wire.MaxReasonBytes:
		return fmt.Errorf(`"reason" has %d bytes, limit %d`, len(d.Reason), wire.MaxReasonBytes)
	case !a.tool.MayDecideAs(d.Issuer, d.Reviewer, d.Groups):
		return fmt.Errorf("reviewer %s is %w calls of %s (the tool's Reviewers: %s)",
			reviewerName(d), errReviewerNotAllowed, a.state.ToolName, strings.Join(a.tool.Options().Reviewers, ", "))
	}
	if len(d.Arguments) > 0 {
		if _, err := a.editOf(decision, d); err != nil {
			return err
		}
	}
	return nil
}

// reviewerName is d's reviewer as a refusal names it: quoted, with the issuer when it has one.
func reviewerName(d wire.ApprovalDecision) string {
	if d.Issuer == "" {
		return quote(d.Reviewer)
	}
	return quote(d.Reviewer) + " of issuer " + quote(d.Issuer)
}

// Refusals of an edit.
var errReviewerNotAllowed = errors.New("not allowed to decide")

var errEditOnReject = errors.New(`"arguments" edits a call to approve; a rejection carries none`)

// editOf snapshots and validates the edited arguments of d like the model's (toolcore.NewToolCall,
// then the tool's validator under the wall-clock guard). Pure: the validator and the handler
// both run it. nil when d carries no edit or the same canonical arguments.
func (a *approval) editOf(decision string, d wire.ApprovalDecision) (*edit, error) {
	if len(d.Arguments) == 0 {
		return nil, nil
	}
	if decision != wire.DecisionApproved {
		return nil, errEditOnReject
	}
	call, err := toolcore.NewToolCall(a.state.ToolCallID, a.state.ToolName, d.Arguments)
	if err != nil {
		return nil, fmt.Errorf("edited arguments: %w", err)
	}
	if string(call.Arguments().Raw()) == string(a.state.Arguments) {
		return nil, nil
	}
	accepted, rejected, ok := validate(a.tool, call, a.budget())
	if !ok {
		return nil, fmt.Errorf("edited arguments refused by the tool's validator: %s", rejected.ErrorMessage())
	}
	return &edit{call: call, accepted: accepted}, nil
}

// decide records an accepted decision; the update's result (in history) is the record. An edit
// is snapshotted and validated again here (the validator does not run on replay): an edit that
// no longer validates fails the update and the call keeps waiting.
func (a *approval) decide(ctx workflow.Context, decision string, d wire.ApprovalDecision) (wire.ApprovalRecord, error) {
	if a.state.Decision != nil {
		return *a.state.Decision, errNotWaiting
	}
	ed, err := a.editOf(decision, d)
	if err != nil {
		return wire.ApprovalRecord{}, err
	}
	rec := wire.ApprovalRecord{
		Decision:  decision,
		Reviewer:  strings.TrimSpace(d.Reviewer),
		Issuer:    d.Issuer,
		Reason:    strings.TrimSpace(d.Reason),
		CallHash:  d.CallHash,
		DecidedAt: workflow.Now(ctx).UTC(),
	}
	if ed != nil {
		rec.Arguments = ed.call.Arguments().Raw()
		rec.ApprovedCallHash = toolcore.CallHash(a.tool, ed.call)
		ed.reviewer = rec.Reviewer
		a.edited = ed
	}
	a.state.Decision = &rec
	return rec, nil
}

// maxDetailsArguments bounds the arguments shown in the current details (the query "approval"
// has them whole).
const maxDetailsArguments = 2000

// waitingDetails is the workflow's current details while it waits (shown in the UI, as
// Markdown): what to decide, then the arguments escaped (safetext) in a code block, so that
// neither a control character nor Markdown in them reaches the reader. Not in history: changing
// it changes no command.
func (a *approval) waitingDetails(workflowID string) string {
	args := string(a.state.Arguments)
	cut := ""
	if len(args) > maxDetailsArguments {
		args, cut = strings.ToValidUTF8(args[:maxDetailsArguments], ""), " (cut at 2000 bytes)"
	}
	args, n := safetext.Escape(args)
	note := safetext.Note(n)
	if note != "" {
		note = " " + note
	}
	fence := strings.Repeat("`", max(3, safetext.LongestRun(args, '`')+1))
	tool, _ := safetext.Escape(a.state.ToolName)
	asked := ""
	if p := a.state.Policy; p != nil {
		id, _ := safetext.Escape(p.PolicyID)
		reason, _ := safetext.Escape(p.Reason)
		asked = " asked by policy " + id
		if reason != "" {
			asked += " (" + reason + ")"
		}
	}
	return "awaiting approval of " + tool + asked + " (call hash " + a.state.CallHash + ", expires " +
		a.state.Deadline.UTC().Format("2006-01-02T15:04:05Z") + "): toolgate approve " + workflowID +
		", or the update \"" + wire.UpdateApprove + "\"/\"" + wire.UpdateReject + "\"\n\narguments" + cut + note + ":\n" +
		fence + "\n" + args + "\n" + fence
}

// timerSummary labels the approval timer in the UI's timeline.
func (a *approval) timerSummary() string {
	tool, _ := safetext.Escape(a.state.ToolName)
	return "approval of " + tool + " expires (call hash " + a.state.CallHash + ")"
}
