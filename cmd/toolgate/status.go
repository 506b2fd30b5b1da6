package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	tgclient "github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/internal/safetext"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

type statusOptions struct {
	conn   connOptions
	target targetOptions
	json   bool
}

func newStatusCommand(a *app) *cobra.Command {
	var o statusOptions
	cmd := &cobra.Command{
		Use:   "status [WORKFLOW_ID]",
		Short: "Show a call's state, queue, attempts, wait and latest progress, or an agent run's calls",
		Long: `Show where a call is, without waiting: its state (running, completed, failed, canceled,
terminated, timedOut), its task queue, the attempt of its tool that runs and how many attempts
started (retries, drained attempts and questions included), the message of the last failed
attempt, what a running call waits for (approval, consent, input, the retry timer, or a worker on
a named task queue), the error of a call that failed (a fatal tool error's message), the latest progress and checkpoint the tool
reported, its latest log messages (the last five; with --json all its heartbeats carry), the
URL where its principal consents while it waits for that (docs/secrets.md),
the questions its tool asks while it waits for input (each key, method, message and fields,
the deadline, and the toolgate answer command; docs/talkback.md) and, once completed, its result message.
For an agent run (any other workflow) it shows the run's type, queue, state and error, and each tool
call the run made, read from its history: call ID, tool, how it ran (child, inline, attached),
outcome (running, ok, a result error code, canceled, fatal, ...), its workflow and message.
One "key value" line each, or a JSON object with --json:

  {"workflowId":"toolcall-x","runId":"...","toolCallId":"x","toolName":"sleep","state":"running","attempt":1,"progress":{"completed":3,"total":600,"message":"..."}}

Exit code 0 whatever the call's state; 2 if there is no such call; 5 on other failures.`,
		Example: `  toolgate status toolcall-call-add-1
  toolgate status --call-id call-add-1 --json`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runStatus(cmd.Context(), a, o, args)
		},
	}
	addConnFlags(cmd, &o.conn)
	addTargetFlags(cmd, &o.target)
	cmd.Flags().BoolVar(&o.json, "json", false, "print one JSON object")
	return cmd
}

// statusJSON is the --json shape of status.
type statusJSON struct {
	WorkflowID string `json:"workflowId"`
	RunID      string `json:"runId"`
	// WorkflowType is ToolCallWorkflow for a call; an agent run's lists its Calls.
	WorkflowType string `json:"workflowType,omitempty"`
	ToolCallID   string `json:"toolCallId"`
	ToolName     string `json:"toolName"`
	// TaskQueue is the task queue of the workflow.
	TaskQueue string `json:"taskQueue,omitempty"`
	State     string `json:"state"`
	// Attempt is the running attempt's number (0: no tool runs); Attempts how many started.
	Attempt  int `json:"attempt"`
	Attempts int `json:"attempts"`
	// RetryAt: the tool waits for its next attempt (backoff or Retry-After). LastFailure is the
	// message of the tool's last failed attempt.
	RetryAt     *time.Time `json:"retryAt,omitempty"`
	LastFailure string     `json:"lastFailure,omitempty"`
	// Waiting is what the running call waits for (approval, consent, input, retry, worker).
	Waiting *tgclient.Wait `json:"waiting,omitempty"`
	// Calls are an agent run's tool calls, in the order it started them.
	Calls []tgclient.RunCall `json:"calls,omitempty"`
	// Error is the message of a call or run that failed, was canceled, terminated or timed out.
	Error      string             `json:"error,omitempty"`
	Progress   *toolcore.Progress `json:"progress,omitempty"`
	Checkpoint json.RawMessage    `json:"checkpoint,omitempty"`
	// Logs are the running tool's latest log messages (toolcore.Log), oldest first.
	Logs   []toolcore.LogMessage `json:"logs,omitempty"`
	Result *toolcore.Result      `json:"result,omitempty"`
	// Priority is the call's priority and fairness key (docs/flow-control.md), when set.
	Priority *wire.Priority `json:"priority,omitempty"`
	// Principal is whom the call runs for (docs/principals.md), when it has one.
	Principal *toolcore.Principal `json:"principal,omitempty"`
	// Approval is the call's wait for a decision (the query "approval"), while it waits.
	Approval *wire.ApprovalState `json:"approval,omitempty"`
	// Consent is the call's wait for its principal's consent (the query "toolgate.consent"),
	// while it waits; its request is zero when no worker answered the query.
	Consent *wire.ConsentState `json:"consent,omitempty"`
	// Input is the call's wait for answers to its tool's questions (the query "toolgate.input"),
	// while it waits; no round and no questions when no worker answered the query.
	Input *wire.InputState `json:"input,omitempty"`
}

func runStatus(ctx context.Context, a *app, o statusOptions, args []string) error {
	call, err := openCall(ctx, a, o.conn, o.target, args)
	if err != nil {
		return err
	}
	defer call.close()
	var waiting *wire.ApprovalState
	if call.status.State == tgclient.Running {
		waiting = awaitingApproval(ctx, call.client, call.workflowID)
	}
	return writeStatus(a.out, call.status, waiting, o.json)
}

// approvalQueryTimeout bounds status's query of a running call's approval: a query waits for a
// worker, and status must answer without one.
const approvalQueryTimeout = 3 * time.Second

// awaitingApproval is the approval state of a running call when it waits for a decision; nil
// when it does not, or no worker answered in time.
func awaitingApproval(ctx context.Context, cl *tgclient.Client, workflowID string) *wire.ApprovalState {
	ctx, cancel := context.WithTimeout(ctx, approvalQueryTimeout)
	defer cancel()
	st, err := cl.ApprovalByWorkflowID(ctx, workflowID)
	if err != nil || !st.Waiting {
		return nil
	}
	return &st
}

func writeStatus(w io.Writer, st tgclient.Status, waiting *wire.ApprovalState, asJSON bool) error {
	out := statusJSON{
		WorkflowID:   st.WorkflowID,
		RunID:        st.RunID,
		WorkflowType: st.WorkflowType,
		ToolCallID:   st.ToolCallID,
		ToolName:     st.ToolName,
		TaskQueue:    st.TaskQueue,
		State:        st.State.String(),
		Attempt:      st.Attempt,
		Attempts:     st.Attempts,
		LastFailure:  st.LastFailure,
		Waiting:      st.Waiting,
		Calls:        st.Calls,
		Progress:     st.Progress,
		Checkpoint:   st.Checkpoint,
		Logs:         st.Logs,
		Result:       st.Result,
		Principal:    st.Principal,
	}
	if !st.RetryAt.IsZero() {
		at := st.RetryAt.UTC()
		out.RetryAt = &at
	}
	if !st.Priority.IsZero() {
		p := st.Priority
		out.Priority = &p
	}
	if st.Err != nil {
		out.Error = st.Err.Error()
	}
	out.Approval = waiting
	out.Consent = st.Consent
	out.Input = st.Input
	if asJSON {
		return writeJSON(w, out)
	}
	if out.WorkflowType != "" && out.WorkflowType != wire.ToolCallWorkflowName {
		return writeLines(w, runLines(out))
	}
	lines := [][2]string{
		{"workflow", out.WorkflowID},
		{"run", out.RunID},
		{"call", out.ToolCallID},
		{"tool", out.ToolName},
		{"queue", out.TaskQueue},
		{"state", out.State},
	}
	if out.Attempt > 0 {
		lines = append(lines, [2]string{"attempt", strconv.Itoa(out.Attempt)})
	}
	lines = append(lines, [2]string{"attempts", strconv.Itoa(out.Attempts)})
	if out.Waiting != nil {
		lines = append(lines, [2]string{"waits for", waitText(*out.Waiting)})
	}
	if out.LastFailure != "" && out.RetryAt == nil {
		lines = append(lines, [2]string{"failure", "last attempt failed: " + out.LastFailure})
	}
	if out.Error != "" {
		lines = append(lines, [2]string{"error", out.Error})
	}
	if p := out.Priority; p != nil {
		lines = append(lines, [2]string{"priority", priorityText(*p)})
	}
	if p := out.Principal; p != nil {
		lines = append(lines, [2]string{"principal", principalText(*p)})
	}
	if ap := out.Approval; ap != nil {
		lines = append(lines, approvalLines(out.WorkflowID, *ap)...)
	}
	if c := out.Consent; c != nil {
		lines = append(lines, [2]string{"consent", consentText(*c)})
	}
	if in := out.Input; in != nil {
		lines = append(lines, inputLines(out.WorkflowID, *in)...)
	}
	if out.RetryAt != nil {
		lines = append(lines, [2]string{"retry at", out.RetryAt.Format(time.RFC3339) + " after: " + out.LastFailure})
	}
	if out.Progress != nil {
		lines = append(lines, [2]string{"progress", renderProgress(*out.Progress)})
	}
	if out.Checkpoint != nil {
		lines = append(lines, [2]string{"checkpoint", string(out.Checkpoint)})
	}
	lines = append(lines, logLines(out.Logs)...)
	if out.Result != nil {
		data, err := out.Result.MarshalJSON()
		if err != nil {
			return fmt.Errorf("encode result: %w", err)
		}
		lines = append(lines, [2]string{"result", string(data)})
	}
	return writeLines(w, lines)
}

// runLines are status's lines of an agent run: its type, queue and state, one line per tool call
// it made (call ID, tool, how it ran, outcome, its workflow and message when it has them), and the
// run's error.
func runLines(out statusJSON) [][2]string {
	lines := [][2]string{
		{"workflow", out.WorkflowID},
		{"run", out.RunID},
		{"type", out.WorkflowType},
		{"queue", out.TaskQueue},
		{"state", out.State},
		{"calls", runCallsSummary(out.Calls)},
	}
	for _, c := range out.Calls {
		text := c.ToolCallID + " " + c.ToolName + " " + c.Kind + " " + c.Outcome
		if c.WorkflowID != "" {
			text += " " + c.WorkflowID
		}
		if c.Message != "" {
			text += ": " + c.Message
		}
		lines = append(lines, [2]string{"call", text})
	}
	if out.Principal != nil {
		lines = append(lines, [2]string{"principal", principalText(*out.Principal)})
	}
	if out.Error != "" {
		lines = append(lines, [2]string{"error", out.Error})
	}
	return lines
}

// runCallsSummary counts an agent run's calls per outcome: "3: 2 ok, 1 TOOL_EXECUTION_FAILED".
func runCallsSummary(calls []tgclient.RunCall) string {
	var order []string
	count := map[string]int{}
	for _, c := range calls {
		if count[c.Outcome] == 0 {
			order = append(order, c.Outcome)
		}
		count[c.Outcome]++
	}
	parts := make([]string, 0, len(order))
	for _, o := range order {
		parts = append(parts, strconv.Itoa(count[o])+" "+o)
	}
	text := strconv.Itoa(len(calls))
	if len(parts) > 0 {
		text += ": " + strings.Join(parts, ", ")
	}
	return text
}

// waitText says what a running call waits for: "approval", "consent", "input", "the retry timer
// until T", "a worker on task queue Q (since T)".
func waitText(w tgclient.Wait) string {
	switch w.Kind {
	case tgclient.WaitRetry:
		return "the retry timer until " + w.Until.UTC().Format(time.RFC3339)
	case tgclient.WaitWorker:
		text := "a worker on task queue " + w.TaskQueue
		if !w.Since.IsZero() {
			text += " (since " + w.Since.UTC().Format(time.RFC3339) + ")"
		}
		return text
	default:
		return string(w.Kind)
	}
}

// approvalLines are status's lines of a call waiting for approval: since when, until when, the
// hash a decision names, the arguments, and the commands that decide.
func approvalLines(workflowID string, ap wire.ApprovalState) [][2]string {
	since := "awaiting approval"
	if !ap.Since.IsZero() {
		since += " since " + ap.Since.UTC().Format(time.RFC3339)
	}
	return [][2]string{
		{"approval", since},
		{"expires", ap.Deadline.UTC().Format(time.RFC3339)},
		{"hash", ap.CallHash},
		{"arguments", string(ap.Arguments)},
		{"decide", "toolgate approve " + workflowID + " (or reject; --args to approve edited arguments)"},
	}
}

// consentText is status's line of a call waiting for its principal's consent: to which
// provider, for which scopes, since and until when, and the URL where the principal gives it.
// writeLines escapes it: the URL comes from a provider's configuration and the scopes from a tool.
func consentText(c wire.ConsentState) string {
	if c.Request.URL == "" {
		return "awaiting consent (no worker answered the query; the URL shows once one does)"
	}
	text := "awaiting consent to " + c.Request.Provider
	if len(c.Request.Scopes) > 0 {
		text += " (scopes " + strings.Join(c.Request.Scopes, " ") + ")"
	}
	if !c.Since.IsZero() {
		text += " since " + c.Since.UTC().Format(time.RFC3339)
	}
	if !c.Deadline.IsZero() {
		text += " until " + c.Deadline.UTC().Format(time.RFC3339)
	}
	return text + ": " + c.Request.URL
}

// principalText shows whom a call runs for, escaped (a caller names it): "alice (https://idp),
// tenant acme, via agent-1, authenticated by mcp", then its groups.
func principalText(p toolcore.Principal) string {
	text := p.String()
	if len(p.Groups) > 0 {
		text += ", groups " + strings.Join(p.Groups, " ")
	}
	return safetext.String(text)
}

// priorityText shows a call's priority: "3 (default)", then the fairness key (escaped: it may come
// from a model's caller) and weight when set.
func priorityText(p wire.Priority) string {
	level := strconv.Itoa(p.Level)
	if p.Level == 0 {
		level = strconv.Itoa(wire.DefaultPriorityLevel) + " (default)"
	}
	if p.FairnessKey != "" {
		level += ", fairness key " + safetext.String(strconv.Quote(p.FairnessKey))
	}
	if p.FairnessWeight != 0 {
		level += ", weight " + strconv.FormatFloat(float64(p.FairnessWeight), 'g', -1, 32)
	}
	return level
}
