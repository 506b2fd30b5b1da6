package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"go.uber.org/zap"

	tgclient "github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/internal/safetext"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// progressInterval is how often a foreground call asks the server for the running tool's
// progress (client.Options.ProgressInterval).
const progressInterval = 500 * time.Millisecond

type callOptions struct {
	conn      connOptions
	taskQueue string
	scope     string
	id        string
	detach    bool
	progress  string
	priority  wire.Priority
	principal toolcore.Principal // --as...; asserted, zero without --as
	prompt    string             // --prompt: auto, always, never
}

func newCallCommand(a *app) *cobra.Command {
	var o callOptions
	cmd := &cobra.Command{
		Use:   "call NAME [ARGUMENTS_JSON]",
		Short: "Run one tool call and print its result message",
		Long: `Run one tool call durably and print the tool-result message JSON on stdout, e.g.

  {"id":"tool-result-cli-...","role":"toolResult","toolCallId":"cli-...","toolName":"add","content":"{\"sum\":42}","isError":false}

Give the tool NAME and its ARGUMENTS_JSON object (default {}), or no arguments and a whole tool
call on stdin: {"type":"toolCall","id":"call-1","name":"add","arguments":{"left":1,"right":2}}.
The call ID is --id, the stdin call's id, or a fresh "cli-<random hex>"; the workflow ID is
toolcall-<call ID> (<scope>/toolcall-<call ID> with --scope). Calling again with the same ID
attaches to the same execution and prints its recorded result: nothing runs twice.

While the tool runs, its progress is shown on stderr (--progress): each change once, in order,
and the tool's last report before the result (the bar stays on its line). When no worker polls
the task queue 3 seconds after the start, a line on stderr says so, at any --log-level, and the
call keeps waiting: it runs once a worker polls. A call whose tool needs its principal's
consent to a provider (docs/secrets.md) prints the URL to open on stderr, once, and waits for
it. A call whose tool asks for input mid-run (docs/talkback.md) prompts for the answers on the
terminal: an elicitation's message, accept, decline or cancel, then its form's fields by type; a
sampling request's messages, then your reply in the model's place; a request for roots, then
whether to share the current directory. With stdin not a terminal (or --prompt never) it prints
the questions and the toolgate answer command on stderr instead, and waits for the answers;
--prompt always reads the answers from stdin, one line per prompt, for scripts.
The tool's log messages (toolcore.Log) are shown on stderr too, a line each, in order with its
progress (--progress off hides both).
Ctrl-C cancels the call: the tool sees its
context canceled, the workflow ends canceled, and call exits 4 (with no worker, at once: the
recorded cancel request ends the call unrun when one polls). --detach only starts the call and
prints the workflow ID; use result, status, cancel with it.

Exit codes: 0 result with isError false, 1 result with isError true (printed too), 2 bad input
(malformed call, same ID with other name or arguments), 3 fatal NonRecoverableToolError (stop
the agent run), 4 canceled, 5 other failure.`,
		Example: `  toolgate call add '{"left":20,"right":22}'
  echo '{"type":"toolCall","id":"call-add-1","name":"add","arguments":{"left":20,"right":22}}' | toolgate call
  toolgate call sleep '{"seconds":600}' --detach
  toolgate call write_file '{"path":"notes.txt","content":"hi"}' --as alice --as-group guests`,
		Args: cobra.MaximumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCall(cmd.Context(), a, o, args)
		},
	}
	addConnFlags(cmd, &o.conn)
	addTaskQueueFlag(cmd, &o.taskQueue)
	addScopeFlag(cmd, &o.scope)
	fs := cmd.Flags()
	fs.StringVar(&o.id, "id", "", `tool call ID (default "cli-" and random hex; with a call on stdin, its id)`)
	fs.BoolVarP(&o.detach, "detach", "d", false, "start the call, print its workflow ID and exit")
	fs.StringVar(&o.progress, "progress", string(progressAuto), "progress on stderr: auto (bar on a terminal), bar, plain (a line per change), off")
	fs.IntVar(&o.priority.Level, "priority", 0, "priority 1 (dispatched first) .. 5 (last); default the server's 3 (docs/flow-control.md)")
	fs.StringVar(&o.priority.FairnessKey, "fairness-key", "", "fairness key (an agent run, a user, a tenant; at most 64 bytes): keys share the tool fleet fairly")
	fs.Float32Var(&o.priority.FairnessWeight, "fairness-weight", 0, "weight of the fairness key's share (default the server's 1)")
	fs.StringVar(&o.principal.Subject, "as", "", "run the call for this principal subject, asserted (docs/principals.md); the tool, policy and status see it")
	fs.StringVar(&o.principal.Issuer, "as-issuer", "", "issuer of the --as principal")
	fs.StringVar(&o.principal.Tenant, "as-tenant", "", "tenant of the --as principal")
	fs.StringSliceVar(&o.principal.Groups, "as-group", nil, "a group of the --as principal (repeatable)")
	fs.StringVar(&o.prompt, "prompt", promptAuto, "when the tool asks for input: auto (prompt when stdin is a terminal), always (read answers from stdin, one line per prompt), never (print the questions and how to answer them)")
	return cmd
}

// addScopeFlag adds --scope, the optional workflow ID prefix of the client package.
func addScopeFlag(cmd *cobra.Command, scope *string) {
	fs := cmd.Flags()
	fs.StringVar(scope, "scope", "", "workflow ID scope: workflow IDs become <scope>/toolcall-<call ID>")
	bindEnv(fs, "scope", "TOOLGATE_SCOPE")
}

// toolCall builds the call from the arguments or, with none, from stdin.
func (o callOptions) toolCall(args []string, stdin io.Reader) (toolcore.ToolCall, error) {
	if len(args) == 0 {
		if o.id != "" {
			return toolcore.ToolCall{}, badInput(errors.New("--id goes with NAME [ARGUMENTS_JSON]; a call on stdin brings its own id"))
		}
		if isTerminal(stdin) {
			return toolcore.ToolCall{}, badInput(errors.New("give NAME [ARGUMENTS_JSON], or pipe a whole tool call to stdin"))
		}
		data, err := io.ReadAll(io.LimitReader(stdin, toolcore.MaxCallBytes+1))
		if err != nil {
			return toolcore.ToolCall{}, badInput(fmt.Errorf("read tool call from stdin: %w", err))
		}
		call, err := toolcore.ParseToolCall(data)
		if err != nil {
			return toolcore.ToolCall{}, badInput(err)
		}
		return call, nil
	}
	id := o.id
	if id == "" {
		var b [8]byte
		_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
		id = "cli-" + hex.EncodeToString(b[:])
	}
	arguments := "{}"
	if len(args) == 2 {
		arguments = args[1]
	}
	call, err := toolcore.NewToolCall(id, args[0], []byte(arguments))
	if err != nil {
		return toolcore.ToolCall{}, badInput(err)
	}
	return call, nil
}

func runCall(ctx context.Context, a *app, o callOptions, args []string) error {
	mode, err := resolveProgressMode(progressMode(o.progress), a.err)
	if err != nil {
		return badInput(err)
	}
	call, err := o.toolCall(args, a.in)
	if err != nil {
		return err
	}
	prompting, err := o.prompting(len(args) == 0, a.in)
	if err != nil {
		return badInput(err)
	}
	if err := o.priority.Check(); err != nil {
		return badInput(err)
	}
	ctx = tgclient.WithPriority(ctx, o.priority)
	if !o.principal.IsZero() || o.principal.Issuer != "" || o.principal.Tenant != "" || len(o.principal.Groups) > 0 {
		if err := o.principal.Check(); err != nil {
			return badInput(fmt.Errorf("--as: %w", err))
		}
		ctx = tgclient.WithPrincipal(ctx, o.principal)
	}
	ids := callIDs{WorkflowID: wire.WorkflowID(o.scope, call.ID()), ToolCallID: call.ID(), ToolName: call.Name()}
	logger := a.logger.With(ids.fields()...)

	c, err := o.conn.dial(ctx, a.logger)
	if err != nil {
		return aboutCall(ids, err)
	}
	defer c.Close()
	view := &progressView{w: a.err, mode: mode}
	copts := o.conn.toolgateOptions(o.taskQueue, o.scope)
	// Not a log line: shown at every log level, since the call would otherwise wait in silence.
	copts.NoWorker = func(ev tgclient.NoWorkerEvent) { view.println(noWorkerNotice(ev.TaskQueue)) }
	copts.OtherQueue = func(ev tgclient.OtherQueueEvent) { view.println(otherQueueNotice(ev)) }
	copts.OnProgress, copts.ProgressInterval = view.hook(), progressInterval
	copts.OnLog = view.logHook()
	copts.OnConsent = func(ev tgclient.ConsentEvent) { view.println(consentNotice(ev)) }
	copts.OnApproval = func(ev tgclient.ApprovalEvent) { view.println(approvalNotice(ev)) }
	copts.OnInput, copts.InputInterval = inputNotice(view.println), progressInterval
	if prompting {
		dir, _ := os.Getwd() // unknown: the root offered is "file:///."
		p := &inputPrompter{out: a.err, lines: newLineReader(a.in), dir: dir, clear: view.clear}
		copts.OnInput = p.hook
	}
	cl := tgclient.New(c, copts)

	if o.detach {
		wid, err := cl.Start(ctx, call)
		if err != nil {
			return aboutCall(ids, err)
		}
		logger.Info("call started (detached)")
		_, err = fmt.Fprintln(a.out, wid)
		return err
	}

	logger.Info("call started")
	interrupted := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			view.clear()
			logger.Info("interrupted: canceling the call and waiting for the tool to stop")
		case <-interrupted:
		}
	}()
	// Execute delivers the tool's last report (e.g. 3/3) before it returns the result: the bar
	// keeps it on its line above the result; any other outcome erases the bar.
	res, err := cl.Execute(ctx, call)
	close(interrupted)
	if err != nil {
		view.clear()
		return aboutCall(ids, err)
	}
	view.finish()
	return printResult(a, logger, res)
}

// prompting reports whether the call prompts for its tool's questions on stdin: --prompt always,
// or auto with stdin a terminal; never when the call itself is read from stdin.
func (o callOptions) prompting(callOnStdin bool, stdin io.Reader) (bool, error) {
	switch o.prompt {
	case promptAlways:
		if callOnStdin {
			return false, errors.New("--prompt always reads answers from stdin: give NAME [ARGUMENTS_JSON] instead of a call on stdin")
		}
		return true, nil
	case promptAuto:
		return !callOnStdin && isTerminal(stdin), nil
	case promptNever:
		return false, nil
	}
	return false, fmt.Errorf("--prompt %q: want auto, always or never", o.prompt)
}

// noWorkerNotice is the line call prints on stderr when no worker polls taskQueue a few seconds
// after the start (client.Options.NoWorker). The call keeps waiting.
func noWorkerNotice(taskQueue string) string {
	return fmt.Sprintf("toolgate: no worker polls task queue %q yet (is the worker running, on this queue and namespace?); the call waits for one, Ctrl-C cancels it", taskQueue)
}

// otherQueueNotice is the line call prints on stderr, at once, when the call's ID names a running
// call started on another task queue (client.Options.OtherQueue): it waits there, not here.
func otherQueueNotice(ev tgclient.OtherQueueEvent) string {
	return safetext.String(fmt.Sprintf("toolgate: %s is already running, started on task queue %q (not %q): this call attached to it and waits with it; "+
		"a worker on %q runs it, or cancel it (toolgate cancel %s) and call again under a new call ID (docs/agents.md, a call stuck on another queue)",
		ev.WorkflowID, ev.TaskQueue, ev.Requested, ev.TaskQueue, ev.WorkflowID))
}

// approvalNotice is the plain line call prints on stderr, once per wait, whatever the terminal,
// while the call waits for an approval decision (client.Options.OnApproval): how to decide.
func approvalNotice(ev tgclient.ApprovalEvent) string {
	return safetext.String(fmt.Sprintf("toolgate: the call waits for approval of %s (call hash %s) until %s: toolgate approve %s (or reject); the call goes on once decided, Ctrl-C cancels it",
		ev.ToolName, ev.State.CallHash, ev.State.Deadline.UTC().Format(time.RFC3339), ev.WorkflowID))
}

// consentNotice is the line call prints on stderr, once per request, while the call waits for its
// principal's consent (client.Options.OnConsent): the URL to open. Escaped: a provider's
// configuration and a tool's scopes are not ours.
func consentNotice(ev tgclient.ConsentEvent) string {
	scopes := ""
	if len(ev.Request.Scopes) > 0 {
		scopes = " (scopes " + strings.Join(ev.Request.Scopes, " ") + ")"
	}
	return safetext.String(fmt.Sprintf("toolgate: the call waits for its principal's consent to %s%s until %s: open %s; the call goes on once it is given, Ctrl-C cancels it",
		ev.Request.Provider, scopes, ev.Deadline.UTC().Format(time.RFC3339), ev.Request.URL))
}

// printResult writes the result message JSON on stdout and logs one line about it; an error
// result ends the command with exit 1.
func printResult(a *app, logger *zap.Logger, res toolcore.Result) error {
	data, err := res.MarshalJSON() // the wire bytes (json.Marshal would escape <, >, &)
	if err != nil {
		return fmt.Errorf("encode result: %w", err)
	}
	data, _ = safetext.JSON(data) // the same JSON value; hidden characters as \u escapes
	if _, err := fmt.Fprintf(a.out, "%s\n", data); err != nil {
		return fmt.Errorf("print result: %w", err)
	}
	if res.IsError() {
		logger.Info("call finished with an error result", zap.Stringer("code", res.ErrorCode()))
		return &exitError{code: ExitErrorResult}
	}
	logger.Info("call finished")
	return nil
}
