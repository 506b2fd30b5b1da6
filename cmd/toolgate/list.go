package main

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	tgclient "github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/internal/safetext"
)

// Bounds of list's --limit.
const (
	defaultListLimit = 50
	maxListLimit     = 10000
)

type listOptions struct {
	conn      connOptions
	tool      string
	outcome   string
	principal string
	owner     string
	agentRun  string
	taskQueue string
	since     string
	until     string
	status    string
	limit     int
	count     bool
	json      bool
}

func newListCommand(a *app) *cobra.Command {
	var o listOptions
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List and count calls by tool, outcome, principal, agent run, time and state",
		Long: `List the calls (ToolCallWorkflow executions) the filters select, newest first, then count them
per outcome. Filters combine (AND); each is optional:

  --tool NAME          the tool (ToolName)
  --outcome OUTCOME    ok (both recorded forms: ToolOutcome "ok" or unset), error (any error
                       result), a result error code (TOOL_EXECUTION_FAILED, ...), canceled, fatal,
                       INVALID_TOOL_CALL, failed, running, awaiting_approval, awaiting_consent,
                       awaiting_input, terminated, timedOut
  --principal SUBJECT  whom the calls run for (ToolSubject)
  --owner SCOPE        the principal scope owning the calls (ToolPrincipal: MCP's callers)
  --task-queue QUEUE   the task queue of the calls' workflows
  --agent-run ID       the calls an agent run started as children (ParentWorkflowId); its inline
                       calls live in its own history: toolgate status ID lists them all
  --since, --until     when the calls started: a duration back from now (1h, 30m) or a time
                       (2026-12-06T14:00:00Z); since is inclusive, until exclusive
  --status STATE       running, completed, failed, canceled, terminated, timedOut

One line per call (workflow ID, tool, call ID, state, outcome, start time, agent run; text a model
or a caller wrote is escaped), at most --limit, then a summary line counting every selected call
per outcome; the counts add up to the total. --count prints only the summary; --json prints one
object {"calls":[...],"counts":{"total":N,"byOutcome":{...}},"more":bool}. Visibility lags history
by a moment: a call that has just closed may show its earlier state.

Exit codes: 0 listed (also when none match), 2 bad filters, 5 failure.`,
		Example: `  toolgate list --tool book --outcome error --since 1h
  toolgate list --agent-run agent-7 --json
  toolgate list --principal alice --since 24h --count`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runList(cmd.Context(), a, o, time.Now())
		},
	}
	addConnFlags(cmd, &o.conn)
	fs := cmd.Flags()
	fs.StringVar(&o.tool, "tool", "", "only calls of this tool")
	fs.StringVar(&o.outcome, "outcome", "", "only calls with this outcome (ok, error, a result error code, canceled, fatal, running, ...)")
	fs.StringVar(&o.principal, "principal", "", "only calls run for this subject (ToolSubject)")
	fs.StringVar(&o.owner, "owner", "", "only calls owned by this principal scope (ToolPrincipal: MCP's callers)")
	fs.StringVar(&o.agentRun, "agent-run", "", "only the calls this agent run (a workflow ID) started as children")
	fs.StringVar(&o.taskQueue, "task-queue", "", "only calls whose workflow runs on this task queue")
	fs.StringVar(&o.since, "since", "", "only calls started at or after this: a duration back from now (1h) or an RFC 3339 time")
	fs.StringVar(&o.until, "until", "", "only calls started before this: a duration back from now or an RFC 3339 time")
	fs.StringVar(&o.status, "status", "", "only calls in this state (running, completed, failed, canceled, terminated, timedOut)")
	fs.IntVar(&o.limit, "limit", defaultListLimit, "list at most this many calls (1 to 10000); the counts cover all")
	fs.BoolVar(&o.count, "count", false, "print only the counts per outcome")
	fs.BoolVar(&o.json, "json", false, "print one JSON object")
	return cmd
}

// listJSON is the --json shape of list.
type listJSON struct {
	Calls  []callJSON `json:"calls"`
	Counts countsJSON `json:"counts"`
	// More says more calls match than --limit listed.
	More bool `json:"more"`
}

// callJSON is one call of list --json.
type callJSON struct {
	WorkflowID string     `json:"workflowId"`
	RunID      string     `json:"runId"`
	ToolName   string     `json:"toolName,omitempty"`
	ToolCallID string     `json:"toolCallId,omitempty"`
	State      string     `json:"state"`
	Outcome    string     `json:"outcome,omitempty"`
	Principal  string     `json:"principal,omitempty"`
	TaskQueue  string     `json:"taskQueue,omitempty"`
	AgentRun   string     `json:"agentRun,omitempty"`
	Started    time.Time  `json:"started"`
	Closed     *time.Time `json:"closed,omitempty"`
}

// countsJSON is the counts of list --json.
type countsJSON struct {
	Total     int64            `json:"total"`
	ByOutcome map[string]int64 `json:"byOutcome"`
}

func runList(ctx context.Context, a *app, o listOptions, now time.Time) error {
	filter, err := o.filter(now)
	if err != nil {
		return badInput(err)
	}
	if _, err := filter.Query(); err != nil {
		return badInput(err)
	}
	if o.limit < 1 || o.limit > maxListLimit {
		return badInput(fmt.Errorf("--limit %d: want 1 to %d", o.limit, maxListLimit))
	}
	c, err := o.conn.dial(ctx, a.logger)
	if err != nil {
		return err
	}
	defer c.Close()
	tg := o.conn.toolgate(c, "", "")
	out := listJSON{Calls: []callJSON{}}
	if !o.count {
		var token []byte
		for len(out.Calls) < o.limit {
			calls, next, err := tg.FindCalls(ctx, filter, min(o.limit-len(out.Calls)+1, 1000), token)
			if err != nil {
				return err
			}
			for _, s := range calls {
				if len(out.Calls) == o.limit {
					out.More = true
					break
				}
				out.Calls = append(out.Calls, callJSONOf(s))
			}
			if next == nil || out.More {
				break
			}
			token = next
		}
	}
	counts, err := tg.CountCalls(ctx, filter)
	if err != nil {
		return err
	}
	out.Counts = countsJSON{Total: counts.Total, ByOutcome: counts.ByOutcome}
	if !o.count && int64(len(out.Calls)) < counts.Total {
		out.More = true // listed fewer than counted: the limit, or calls that started meanwhile
	}
	if o.json {
		return writeJSON(a.out, out)
	}
	if err := writeCalls(a.out, out.Calls); err != nil {
		return err
	}
	_, err = fmt.Fprintln(a.out, countsText(out.Counts, len(out.Calls), o.count))
	return err
}

// filter is the CallFilter of the flags; since and until relative to now.
func (o listOptions) filter(now time.Time) (tgclient.CallFilter, error) {
	f := tgclient.CallFilter{Tool: o.tool, Outcome: o.outcome, Principal: o.principal, Owner: o.owner,
		AgentRun: o.agentRun, TaskQueue: o.taskQueue}
	var err error
	if f.Since, err = timeFlag("--since", o.since, now); err != nil {
		return f, err
	}
	if f.Until, err = timeFlag("--until", o.until, now); err != nil {
		return f, err
	}
	if o.status != "" {
		st, ok := tgclient.ParseState(o.status)
		if !ok {
			return f, fmt.Errorf("--status %q: want running, completed, failed, canceled, terminated or timedOut", o.status)
		}
		f.Status = st
	}
	return f, nil
}

// timeFlag parses a --since/--until value: a positive duration back from now, or an RFC 3339
// time; zero when empty.
func timeFlag(name, v string, now time.Time) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	if d, err := time.ParseDuration(v); err == nil {
		if d <= 0 {
			return time.Time{}, fmt.Errorf("%s %s: want a positive duration back from now", name, v)
		}
		return now.Add(-d), nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, fmt.Errorf("%s %q: want a duration (1h) or an RFC 3339 time (2026-12-06T14:00:00Z)", name, v)
	}
	return t, nil
}

// callJSONOf is the --json entry of a call.
func callJSONOf(s tgclient.CallSummary) callJSON {
	c := callJSON{WorkflowID: s.WorkflowID, RunID: s.RunID, ToolName: s.ToolName, ToolCallID: s.ToolCallID,
		State: s.State.String(), Outcome: s.Outcome, Principal: s.Principal, TaskQueue: s.TaskQueue,
		AgentRun: s.AgentRun, Started: s.Started.UTC()}
	if !s.Closed.IsZero() {
		closed := s.Closed.UTC()
		c.Closed = &closed
	}
	return c
}

// writeCalls writes one tab-separated line per call: workflow ID, tool, call ID, state, outcome,
// start time and agent run ("-" for none), each field escaped on its own (the tabs stay), and a
// note when anything was escaped.
func writeCalls(w io.Writer, calls []callJSON) error {
	for _, c := range calls {
		fields := []string{c.WorkflowID, c.ToolName, c.ToolCallID, c.State, c.Outcome, c.Started.Format(time.RFC3339), c.AgentRun}
		escaped := 0
		for i, f := range fields {
			if f == "" {
				f = "-"
			}
			var n int
			fields[i], n = safetext.Escape(f)
			escaped += n
		}
		if escaped > 0 {
			fields = append(fields, safetext.Note(escaped))
		}
		if _, err := fmt.Fprintln(w, strings.Join(fields, "\t")); err != nil {
			return err
		}
	}
	return nil
}

// countsText is the summary line: "12 calls: 7 ok, 3 TOOL_EXECUTION_FAILED, 2 running", outcomes
// by count (most first, then by name), and how many of them were listed unless countOnly.
func countsText(c countsJSON, listed int, countOnly bool) string {
	outcomes := make([]string, 0, len(c.ByOutcome))
	for o := range c.ByOutcome {
		outcomes = append(outcomes, o)
	}
	sort.Slice(outcomes, func(i, j int) bool {
		ci, cj := c.ByOutcome[outcomes[i]], c.ByOutcome[outcomes[j]]
		if ci != cj {
			return ci > cj
		}
		return outcomes[i] < outcomes[j]
	})
	parts := make([]string, 0, len(outcomes))
	for _, o := range outcomes {
		parts = append(parts, strconv.FormatInt(c.ByOutcome[o], 10)+" "+safetext.String(o))
	}
	text := plural64(c.Total, "call")
	if len(parts) > 0 {
		text += ": " + strings.Join(parts, ", ")
	}
	if !countOnly && int64(listed) < c.Total {
		text += " (listed " + strconv.Itoa(listed) + "; raise --limit for more)"
	}
	return text
}

// plural64 is "1 call" or "n calls".
func plural64(n int64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.FormatInt(n, 10) + " " + noun + "s"
}
