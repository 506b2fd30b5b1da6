package client

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/converter"

	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// Outcome classes a CallFilter takes besides the ToolOutcome values themselves (wire.OutcomeOK,
// wire.OutcomeCanceled, wire.OutcomeFatal, wire.OutcomeInvalidToolCall, a result error code such
// as "TOOL_EXECUTION_FAILED", or a wait such as wire.OutcomeAwaitingApproval). CountCalls also
// reports its remainders under these names.
const (
	// OutcomeError is every call that completed with an error result (any result error code).
	OutcomeError = "error"
	// OutcomeRunning is every call still running (waiting or not).
	OutcomeRunning = "running"
	// OutcomeFailed is a failed call that is neither fatal nor an invalid call (CountCalls'
	// remainder of the failed calls; a filter on it selects every failed call).
	OutcomeFailed = "failed"
	// OutcomeTerminated is a call terminated by an operator or a tool outside toolgate.
	OutcomeTerminated = "terminated"
	// OutcomeTimedOut is a call whose workflow hit its execution timeout.
	OutcomeTimedOut = "timedOut"
)

// Bounds of a CallFilter's text fields (a filter may come from a caller).
const (
	maxFilterValueBytes = 1024
)

// CallFilter selects calls (ToolCallWorkflow executions) in the visibility store. Every field is
// optional and narrows the selection; the zero value selects every call of the namespace. The
// outcome rule (docs/contract.md section 9): an ok call records ToolOutcome "ok" or leaves it
// unset, and the filter treats both alike.
type CallFilter struct {
	// Tool is the tool's name (ToolName). Optional: default any tool.
	Tool string
	// Outcome is how the call ended or what it waits for: wire.OutcomeOK (both recorded forms),
	// OutcomeError (any error result), a result error code, wire.OutcomeCanceled,
	// wire.OutcomeFatal, wire.OutcomeInvalidToolCall, OutcomeFailed, OutcomeRunning, a wait
	// (wire.OutcomeAwaitingApproval, ...), OutcomeTerminated or OutcomeTimedOut. Optional:
	// default any outcome.
	Outcome string
	// Principal is the subject of whom the calls run for (ToolSubject, see WithPrincipal).
	// Optional: default anyone's.
	Principal string
	// Owner is the scope of the principal owning the calls (ToolPrincipal, Options.Principal;
	// package mcp's authenticated callers). Optional: default any owner.
	Owner string
	// AgentRun is the workflow ID of an agent run: only the calls it started as children
	// (workflows.ExecuteToolCall and ExecuteRound; visibility's ParentWorkflowId). Its inline calls
	// (workflows.Inline) run in its own history and calls it attached to were started by someone
	// else: Client.StatusByWorkflowID of the run lists all of them. Optional: default any.
	AgentRun string
	// TaskQueue is the task queue the calls' workflows run on. Optional: default any.
	TaskQueue string
	// Since and Until bound when the calls started: Since <= start < Until. Optional: default
	// unbounded.
	Since, Until time.Time
	// Status is the workflow's state. Optional: default any.
	Status State
}

// outcomeValue is the shape of a ToolOutcome value a filter may name (result codes, waits).
var outcomeValue = regexp.MustCompile(`^[A-Za-z_]{1,64}$`)

// Query returns the visibility query of f: always WorkflowType = 'ToolCallWorkflow', ANDed with a
// condition per field set. An error names a field that no call can match (an unknown status, an
// outcome that is no ToolOutcome value, a value over 1 KiB, Until not after Since).
func (f CallFilter) Query() (string, error) {
	conds := []string{"WorkflowType = " + wire.QueryString(wire.ToolCallWorkflowName)}
	for _, kv := range []struct{ attr, value string }{
		{wire.SearchAttributeToolName, f.Tool},
		{wire.SearchAttributeToolSubject, f.Principal},
		{wire.SearchAttributeToolPrincipal, f.Owner},
		{"ParentWorkflowId", f.AgentRun},
		{"TaskQueue", f.TaskQueue},
	} {
		if kv.value == "" {
			continue
		}
		if len(kv.value) > maxFilterValueBytes {
			return "", fmt.Errorf("%s filter is %d bytes, over %d", kv.attr, len(kv.value), maxFilterValueBytes)
		}
		conds = append(conds, kv.attr+" = "+wire.QueryString(kv.value))
	}
	if !f.Since.IsZero() {
		conds = append(conds, "StartTime >= "+queryTime(f.Since))
	}
	if !f.Until.IsZero() {
		if !f.Since.IsZero() && !f.Until.After(f.Since) {
			return "", fmt.Errorf("until %s is not after since %s", f.Until.UTC().Format(time.RFC3339), f.Since.UTC().Format(time.RFC3339))
		}
		conds = append(conds, "StartTime < "+queryTime(f.Until))
	}
	if f.Status != 0 {
		status, ok := executionStatusName(f.Status)
		if !ok {
			return "", fmt.Errorf("unknown status %d", f.Status)
		}
		conds = append(conds, "ExecutionStatus = "+wire.QueryString(status))
	}
	if f.Outcome != "" {
		cond, err := outcomeCondition(f.Outcome)
		if err != nil {
			return "", err
		}
		conds = append(conds, cond)
	}
	return strings.Join(conds, " AND "), nil
}

// outcomeCondition is the visibility condition of one outcome (see CallFilter.Outcome).
func outcomeCondition(outcome string) (string, error) {
	outcomeAttr := wire.SearchAttributeToolOutcome
	switch outcome {
	case wire.OutcomeOK:
		return wire.QueryOKCalls, nil
	case OutcomeError:
		// Completed with a ToolOutcome that is not ok: a result error code (the waits are
		// replaced by the outcome before the workflow closes).
		return "(ExecutionStatus = 'Completed' AND " + outcomeAttr + " IS NOT NULL AND " + outcomeAttr + " != " + wire.QueryString(wire.OutcomeOK) + ")", nil
	case OutcomeRunning:
		return "ExecutionStatus = 'Running'", nil
	case wire.OutcomeCanceled:
		return "ExecutionStatus = 'Canceled'", nil
	case OutcomeFailed:
		return "ExecutionStatus = 'Failed'", nil
	case OutcomeTerminated:
		return "ExecutionStatus = 'Terminated'", nil
	case OutcomeTimedOut:
		return "ExecutionStatus = 'TimedOut'", nil
	}
	if !outcomeValue.MatchString(outcome) {
		return "", fmt.Errorf("outcome %q is no ToolOutcome value (letters and _, at most 64) nor one of ok, error, running, canceled, failed, terminated, timedOut", outcome)
	}
	return outcomeAttr + " = " + wire.QueryString(outcome), nil
}

// queryTime is t as a visibility query's datetime literal.
func queryTime(t time.Time) string { return wire.QueryString(t.UTC().Format(time.RFC3339Nano)) }

// executionStatusName is the ExecutionStatus value of a query for s.
func executionStatusName(s State) (string, bool) {
	switch s {
	case Running:
		return "Running", true
	case Completed:
		return "Completed", true
	case Failed:
		return "Failed", true
	case Canceled:
		return "Canceled", true
	case Terminated:
		return "Terminated", true
	case TimedOut:
		return "TimedOut", true
	default:
		return "", false
	}
}

// ParseState is the inverse of State.String ("running", "completed", "failed", "canceled",
// "terminated", "timedOut"); false for anything else.
func ParseState(s string) (State, bool) {
	for st := Running; st <= TimedOut; st++ {
		if st.String() == s {
			return st, true
		}
	}
	return 0, false
}

// FindCalls returns one page of the calls f selects, newest first: at most pageSize of them
// (the server's default when 0), and the token of the next page (nil after the last). Pass nil
// for the first page. Visibility lags history by a moment: a call that has just started or
// closed may be missing or show its earlier state.
func (c *Client) FindCalls(ctx context.Context, f CallFilter, pageSize int, token []byte) ([]CallSummary, []byte, error) {
	query, err := f.Query()
	if err != nil {
		return nil, nil, fmt.Errorf("find calls: %w", err)
	}
	return c.listCalls(ctx, query, pageSize, token)
}

// listCalls is one page of ListWorkflowExecutions of query, as CallSummaries.
func (c *Client) listCalls(ctx context.Context, query string, pageSize int, token []byte) ([]CallSummary, []byte, error) {
	resp, err := c.sdk.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
		Namespace:     c.opts.Namespace,
		PageSize:      int32(pageSize),
		NextPageToken: token,
		Query:         query,
	})
	if err != nil {
		return nil, nil, fmt.Errorf("list calls: %w", err)
	}
	calls := make([]CallSummary, 0, len(resp.GetExecutions()))
	for _, e := range resp.GetExecutions() {
		fields := e.GetSearchAttributes().GetIndexedFields()
		s := CallSummary{
			WorkflowID: e.GetExecution().GetWorkflowId(),
			RunID:      e.GetExecution().GetRunId(),
			State:      stateOf(e.GetStatus()),
			Started:    e.GetStartTime().AsTime(),
			Outcome:    c.keyword(fields[wire.SearchAttributeToolOutcome]),
			ToolName:   c.keyword(fields[wire.SearchAttributeToolName]),
			ToolCallID: c.keyword(fields[wire.SearchAttributeToolCallID]),
			Principal:  c.keyword(fields[wire.SearchAttributeToolSubject]),
			TaskQueue:  e.GetTaskQueue(),
			AgentRun:   e.GetParentExecution().GetWorkflowId(),
		}
		if s.Outcome == "" && s.State == Completed && s.ToolName != "" {
			// The ok call's recorded form besides "ok" (contract section 9): a searchable call
			// (ToolName set) records every other outcome, so completed without one is ok.
			s.Outcome = wire.OutcomeOK
		}
		if e.GetCloseTime() != nil {
			s.Closed = e.GetCloseTime().AsTime()
		}
		calls = append(calls, s)
	}
	next := resp.GetNextPageToken()
	if len(next) == 0 {
		next = nil
	}
	return calls, next, nil
}

// CallCounts are the calls a filter selects, counted per outcome.
type CallCounts struct {
	// Total is the number of calls selected.
	Total int64
	// ByOutcome counts each selected call under exactly one outcome, so the counts add up to
	// Total: wire.OutcomeOK (both recorded forms), each result error code (TOOL_EXECUTION_FAILED,
	// ...), OutcomeError (an error code none of toolcore's names), wire.OutcomeCanceled,
	// wire.OutcomeFatal, wire.OutcomeInvalidToolCall, OutcomeFailed (the other failed calls),
	// each wait (wire.OutcomeAwaitingApproval, ...), OutcomeRunning (running, waiting for none
	// of those), OutcomeTerminated, OutcomeTimedOut. Outcomes with no call are absent.
	ByOutcome map[string]int64
}

// CountCalls counts the calls f selects, per outcome. The visibility store counts by
// ExecutionStatus in one request (GROUP BY ExecutionStatus: it refuses GROUP BY ToolOutcome), or
// with one request per status where the server refuses that too; then one request per outcome
// inside a status that has calls left to attribute. The counts are taken moments apart, each
// bounded by its status's count and the last of a status the remainder, so they add up to Total
// even while calls close.
func (c *Client) CountCalls(ctx context.Context, f CallFilter) (CallCounts, error) {
	base, err := f.Query()
	if err != nil {
		return CallCounts{}, fmt.Errorf("count calls: %w", err)
	}
	byStatus, err := c.countByStatus(ctx, base)
	if err != nil {
		return CallCounts{}, err
	}
	counts := CallCounts{ByOutcome: map[string]int64{}}
	for _, s := range []struct {
		status    State
		outcomes  []string // counted one by one while calls are left
		remainder string   // what is left after them
	}{
		{Completed, append([]string{wire.OutcomeOK}, errorCodes()...), OutcomeError},
		{Running, []string{wire.OutcomeAwaitingApproval, wire.OutcomeAwaitingConsent, wire.OutcomeAwaitingInput}, OutcomeRunning},
		{Failed, []string{wire.OutcomeFatal, wire.OutcomeInvalidToolCall}, OutcomeFailed},
		{Canceled, nil, wire.OutcomeCanceled},
		{Terminated, nil, OutcomeTerminated},
		{TimedOut, nil, OutcomeTimedOut},
	} {
		left := byStatus[s.status]
		counts.Total += left
		status, _ := executionStatusName(s.status)
		for _, outcome := range s.outcomes {
			if left == 0 {
				break
			}
			cond, err := outcomeCondition(outcome)
			if err != nil {
				return CallCounts{}, err
			}
			n, err := c.count(ctx, base+" AND ExecutionStatus = "+wire.QueryString(status)+" AND "+cond)
			if err != nil {
				return CallCounts{}, err
			}
			n = min(n, left)
			if n > 0 {
				counts.ByOutcome[outcome] = n
			}
			left -= n
		}
		if left > 0 {
			counts.ByOutcome[s.remainder] += left
		}
	}
	return counts, nil
}

// errorCodes are the names of toolcore's result error codes, in their order.
func errorCodes() []string {
	var names []string
	for c := toolcore.ErrorCode(1); ; c++ {
		name := c.String()
		if strings.HasPrefix(name, "ErrorCode(") { // past the last valid code
			return names
		}
		names = append(names, name)
	}
}

// countByStatus counts the executions query selects per State.
func (c *Client) countByStatus(ctx context.Context, query string) (map[State]int64, error) {
	resp, err := c.sdk.CountWorkflow(ctx, &workflowservice.CountWorkflowExecutionsRequest{
		Namespace: c.opts.Namespace,
		Query:     query + " GROUP BY ExecutionStatus",
	})
	var invalid *serviceerror.InvalidArgument
	if errors.As(err, &invalid) {
		return c.countEachStatus(ctx, query) // a store without GROUP BY ExecutionStatus
	}
	if err != nil {
		return nil, fmt.Errorf("count calls: %w", err)
	}
	out := map[State]int64{}
	dc := converter.GetDefaultDataConverter() // search attribute values are never encoded
	for _, g := range resp.GetGroups() {
		var name string
		if vals := g.GetGroupValues(); len(vals) == 1 {
			if err := dc.FromPayload(vals[0], &name); err != nil {
				return nil, fmt.Errorf("count calls: group value: %w", err)
			}
		}
		st, ok := stateOfStatusName(name)
		if !ok {
			return nil, fmt.Errorf("count calls: unexpected execution status %q", name)
		}
		out[st] += g.GetCount()
	}
	return out, nil
}

// countEachStatus is countByStatus with one count per State.
func (c *Client) countEachStatus(ctx context.Context, query string) (map[State]int64, error) {
	out := map[State]int64{}
	for st := Running; st <= TimedOut; st++ {
		name, _ := executionStatusName(st)
		n, err := c.count(ctx, query+" AND ExecutionStatus = "+wire.QueryString(name))
		if err != nil {
			return nil, err
		}
		out[st] = n
	}
	return out, nil
}

// stateOfStatusName is the State of an ExecutionStatus value of visibility.
func stateOfStatusName(name string) (State, bool) {
	for st := Running; st <= TimedOut; st++ {
		if n, _ := executionStatusName(st); n == name {
			return st, true
		}
	}
	return 0, false
}

// count is CountWorkflowExecutions of query.
func (c *Client) count(ctx context.Context, query string) (int64, error) {
	resp, err := c.sdk.CountWorkflow(ctx, &workflowservice.CountWorkflowExecutionsRequest{Namespace: c.opts.Namespace, Query: query})
	if err != nil {
		return 0, fmt.Errorf("count calls: %w", err)
	}
	return resp.GetCount(), nil
}
