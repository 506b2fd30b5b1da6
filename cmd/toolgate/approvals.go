package main

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/user"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"go.uber.org/zap"

	tgclient "github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/internal/safetext"
	"github.com/toolgate/toolgate/wire"
)

type approvalsOptions struct {
	conn connOptions
	json bool
}

func newApprovalsCommand(a *app) *cobra.Command {
	var o approvalsOptions
	cmd := &cobra.Command{
		Use:   "approvals",
		Short: "List the calls waiting for an approval decision",
		Long: `List the running calls whose tool requires approval and that wait for a decision
(search attribute ToolOutcome = "awaiting_approval"), newest first: workflow ID, tool, call ID and
start time, one per line, or a JSON array with --json. Decide with approve or reject.

Exit codes: 0 listed (also when none wait), 5 failure.`,
		Example: `  toolgate approvals
  toolgate approvals --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runApprovals(cmd.Context(), a, o)
		},
	}
	addConnFlags(cmd, &o.conn)
	cmd.Flags().BoolVar(&o.json, "json", false, "print a JSON array")
	return cmd
}

// pendingJSON is one entry of approvals --json.
type pendingJSON struct {
	WorkflowID string    `json:"workflowId"`
	ToolCallID string    `json:"toolCallId"`
	ToolName   string    `json:"toolName"`
	StartTime  time.Time `json:"startTime"`
}

func runApprovals(ctx context.Context, a *app, o approvalsOptions) error {
	c, err := o.conn.dial(ctx, a.logger)
	if err != nil {
		return err
	}
	defer c.Close()
	pending, err := o.conn.toolgate(c, "", "").PendingApprovals(ctx)
	if err != nil {
		return err
	}
	out := make([]pendingJSON, 0, len(pending))
	for _, p := range pending {
		out = append(out, pendingJSON{WorkflowID: p.WorkflowID, ToolCallID: p.ToolCallID, ToolName: p.ToolName, StartTime: p.StartTime.UTC()})
	}
	if o.json {
		return writeJSON(a.out, out)
	}
	return writePending(a.out, out)
}

// writePending writes one line per waiting call, model text (the tool name, the call ID) escaped.
func writePending(w io.Writer, out []pendingJSON) error {
	for _, p := range out {
		// Each field escaped on its own: the tabs between them stay.
		wid, n1 := safetext.Escape(p.WorkflowID)
		tool, n2 := safetext.Escape(p.ToolName)
		id, n3 := safetext.Escape(p.ToolCallID)
		note := ""
		if n := n1 + n2 + n3; n > 0 {
			note = "\t" + safetext.Note(n)
		}
		if _, err := fmt.Fprintf(w, "%s\t%s\t%s\t%s%s\n", wid, tool, id, p.StartTime.Format(time.RFC3339), note); err != nil {
			return err
		}
	}
	return nil
}

type decideOptions struct {
	conn     connOptions
	target   targetOptions
	reviewer string
	issuer   string
	reason   string
	args     string
	yes      bool
}

func newApproveCommand(a *app) *cobra.Command {
	return newDecideCommand(a, true)
}

func newRejectCommand(a *app) *cobra.Command {
	return newDecideCommand(a, false)
}

// newDecideCommand builds approve (approve true) or reject.
func newDecideCommand(a *app, approve bool) *cobra.Command {
	var o decideOptions
	verb, effect := "reject", "the call ends with TOOL_APPROVAL_REJECTED carrying --reason; the tool does not run"
	if approve {
		verb, effect = "approve", "the tool runs; the call's result arrives as usual"
	}
	cmd := &cobra.Command{
		Use:   verb + " [WORKFLOW_ID]",
		Short: strings.ToUpper(verb[:1]) + verb[1:] + " a call waiting for approval",
		Long: `Show the waiting call (tool, arguments, call hash, deadline) and ` + verb + ` it: ` + effect + `.
The decision names the call hash shown, so it applies to exactly that call: if the call or the
tool's definition differ, the call refuses it. Asks for confirmation on the terminal unless --yes.
The reviewer is --reviewer, default $USER, else $LOGNAME, else the subject of the connection's
bearer token (a JWT's sub: --api-key or $TEMPORAL_API_KEY), else the OS account's name, of
--reviewer-issuer when the tool's Reviewers name "<issuer>|<subject>". The decision (who, when,
hash) is recorded in the call's history.

Exit codes: 0 decided, 2 no such call / not waiting / decision refused / not confirmed, 5 failure.`,
		Example: `  toolgate approvals
  toolgate ` + verb + ` toolcall-call-w1` + map[bool]string{true: "", false: ` --reason "not that file"`}[approve] + `
  toolgate ` + verb + ` --call-id call-w1 --yes`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runDecide(cmd.Context(), a, o, approve, args)
		},
	}
	addConnFlags(cmd, &o.conn)
	addTargetFlags(cmd, &o.target)
	fs := cmd.Flags()
	fs.StringVar(&o.reviewer, "reviewer", "", "who decides (default $USER, else $LOGNAME, the bearer token's subject or the OS account)")
	fs.StringVar(&o.issuer, "reviewer-issuer", "", `issuer of the reviewer's identity, for Reviewers entries "<issuer>|<subject>" (default none)`)
	fs.BoolVar(&o.yes, "yes", false, "decide without asking for confirmation (for scripts)")
	if !approve {
		fs.StringVar(&o.reason, "reason", "", "why, shown to the model in the error result")
	} else {
		fs.StringVar(&o.args, "args", "", "approve these arguments (a JSON object) instead of the call's: validated like the original; the tool runs with them and the result tells the model a reviewer changed them")
	}
	return cmd
}

func runDecide(ctx context.Context, a *app, o decideOptions, approve bool, args []string) error {
	wid, err := o.target.workflowID(args)
	if err != nil {
		return err
	}
	reviewer, err := reviewerIdentity(o.reviewer, o.conn.apiKey, a.lookupEnv, user.Current)
	if err != nil {
		return badInput(err)
	}
	c, err := o.conn.dial(ctx, a.logger)
	if err != nil {
		return err
	}
	defer c.Close()
	cl := o.conn.toolgate(c, "", o.target.scope)
	ids := callIDs{WorkflowID: wid}
	st, err := cl.ApprovalByWorkflowID(ctx, wid)
	if err != nil {
		return aboutCall(ids, decideError(notFoundHint(err, wid)))
	}
	ids.ToolCallID, ids.ToolName = st.ToolCallID, st.ToolName
	if err := writeApprovalState(a.out, wid, st); err != nil {
		return err
	}
	if !st.Waiting {
		return aboutCall(ids, decideError(fmt.Errorf("%s: %w", wid, tgclient.ErrNotAwaitingApproval)))
	}
	verb := map[bool]string{true: "approve", false: "reject"}[approve]
	if o.args != "" {
		if !json.Valid([]byte(o.args)) {
			return aboutCall(ids, badInput(errors.New("--args is not JSON")))
		}
		verb = "approve with arguments " + safetext.String(o.args) + ","
	}
	if !o.yes {
		ok, err := confirm(a.in, a.err, fmt.Sprintf("%s this call as %s? [y/N] ", verb, reviewer))
		if err != nil {
			return err
		}
		if !ok {
			return aboutCall(ids, badInput(errors.New("not confirmed; nothing was decided")))
		}
	}
	d := wire.ApprovalDecision{CallHash: st.CallHash, Reviewer: reviewer, Issuer: o.issuer, Reason: o.reason}
	if o.args != "" {
		d.Arguments = json.RawMessage(o.args)
	}
	rec, err := cl.DecideByWorkflowID(ctx, wid, approve, d)
	if err != nil {
		return aboutCall(ids, decideError(err))
	}
	a.logger.Info("decision recorded", append(ids.fields(), zap.String("decision", rec.Decision),
		zap.String("reviewer", rec.Reviewer), zap.String("callHash", rec.CallHash), zap.Time("decidedAt", rec.DecidedAt))...)
	_, err = fmt.Fprintf(a.out, "%-9s %s by %s at %s\n", "decision", rec.Decision, reviewerText(rec), rec.DecidedAt.Format(time.RFC3339))
	if err == nil && rec.ApprovedCallHash != "" {
		_, err = fmt.Fprintf(a.out, "%-9s %s\n%-9s %s\n", "approved", safetext.String(string(rec.Arguments)), "as hash", rec.ApprovedCallHash)
	}
	return err
}

// maxTokenBytes bounds the bearer token reviewerIdentity reads a subject from.
const maxTokenBytes = 16 << 10

// reviewerIdentity is who decides: --reviewer (flag); else $USER or $LOGNAME (as before, so a
// set $USER keeps naming the reviewer); else, where they are unset (systemd, cron, a container),
// the subject (sub) of the bearer token the connection authenticates with when it is a JWT (the
// server verifies the token, this only reads it), else the name of the OS account running the
// command (what whoami prints). None of them is an error saying how to name one.
func reviewerIdentity(flag, bearerToken string, lookupEnv func(string) (string, bool), currentUser func() (*user.User, error)) (string, error) {
	if r := strings.TrimSpace(flag); r != "" {
		return r, nil
	}
	for _, name := range []string{"USER", "LOGNAME"} {
		if v, _ := lookupEnv(name); strings.TrimSpace(v) != "" {
			return strings.TrimSpace(v), nil
		}
	}
	if sub := tokenSubject(bearerToken); sub != "" {
		return sub, nil
	}
	if u, err := currentUser(); err == nil && strings.TrimSpace(u.Username) != "" {
		return strings.TrimSpace(u.Username), nil
	}
	return "", errors.New("name the reviewer with --reviewer: no identity is known (the connection has no bearer token with a subject, $USER and $LOGNAME are unset, and the OS account has no name)")
}

// tokenSubject returns the sub claim of token when it is a JWT, else "". The signature is not
// checked: the server authenticates the token; this only names the caller it will see.
func tokenSubject(token string) string {
	parts := strings.Split(token, ".")
	if len(token) > maxTokenBytes || len(parts) != 3 {
		return ""
	}
	payload, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return ""
	}
	var claims struct {
		Subject string `json:"sub"`
	}
	if json.Unmarshal(payload, &claims) != nil {
		return ""
	}
	return strings.TrimSpace(claims.Subject)
}

// reviewerText is who decided, for a human: the reviewer, and its issuer in parentheses.
func reviewerText(rec wire.ApprovalRecord) string {
	if rec.Issuer == "" {
		return safetext.String(rec.Reviewer)
	}
	return safetext.String(rec.Reviewer) + " (" + safetext.String(rec.Issuer) + ")"
}

// decideError marks the refusals a reviewer can act on as bad input (exit 2).
func decideError(err error) error {
	if errors.Is(err, tgclient.ErrNotAwaitingApproval) || errors.Is(err, tgclient.ErrDecisionRefused) {
		return badInput(err)
	}
	return err
}

// writeApprovalState prints what the reviewer decides, one "key value" line each.
func writeApprovalState(w io.Writer, workflowID string, st wire.ApprovalState) error {
	state := "waiting"
	if !st.Waiting {
		state = "not waiting"
	}
	if st.Decision != nil {
		state = st.Decision.Decision + " by " + st.Decision.Reviewer
		if st.Decision.Issuer != "" {
			state += " (" + st.Decision.Issuer + ")"
		}
	}
	lines := [][2]string{
		{"workflow", workflowID},
		{"call", st.ToolCallID},
		{"tool", st.ToolName},
		{"arguments", string(st.Arguments)},
		{"hash", st.CallHash},
		{"expires", st.Deadline.UTC().Format(time.RFC3339)},
		{"state", state},
	}
	return writeLines(w, lines)
}

// confirm asks prompt on out and reads one line from in: true for y or yes.
func confirm(in io.Reader, out io.Writer, prompt string) (bool, error) {
	if _, err := fmt.Fprint(out, prompt); err != nil {
		return false, err
	}
	line, err := bufio.NewReader(in).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return false, fmt.Errorf("read confirmation: %w", err)
	}
	answer := strings.ToLower(strings.TrimSpace(line))
	return answer == "y" || answer == "yes", nil
}
