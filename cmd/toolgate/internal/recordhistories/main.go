// Command recordhistories records one ToolCallWorkflow history per outcome kind from an embedded
// Temporal server, for the replay tests of package workflows:
//
//	go run ./cmd/toolgate/internal/recordhistories [-out testdata/histories] [-run REGEXP]
//
// -run records only the histories whose file name matches (e.g. -run approval), leaving the
// others as they are.
//
// Histories of calls to toolbox tools go to <out>/*.json (replayable with `toolgate replay`,
// whose registry is the toolbox); those that need the tools of internal/fixtures go to
// <out>/fixtures/*.json. The histories of parents, fixtures.RoundWorkflow running rounds of calls
// as child workflows, go to <out>/rounds/*.json; those of fixtures.InlineRoundWorkflow, running
// them inline (workflows.Inline) on the toolgate worker itself, go to <out>/inline/*.json. It
// prints one line per history: events and bytes.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"time"

	sdkclient "go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"
	"go.uber.org/zap"
	"google.golang.org/protobuf/proto"

	"github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/cmd/toolgate/internal/devserver"
	"github.com/toolgate/toolgate/internal/fixtures"
	"github.com/toolgate/toolgate/internal/logging"
	"github.com/toolgate/toolgate/toolbox"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
	"github.com/toolgate/toolgate/worker"
)

// timeout bounds the whole recording.
const timeout = 5 * time.Minute

func main() {
	out := flag.String("out", "testdata/histories", "directory to write the histories to")
	run := flag.String("run", "", "record only the histories whose file name matches this regular expression")
	flag.Parse()
	only, err := regexp.Compile(*run)
	if err != nil {
		fmt.Fprintln(os.Stderr, "recordhistories: -run:", err)
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	err = record(ctx, *out, only)
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "recordhistories:", err)
		os.Exit(1)
	}
}

// recorder holds what every scenario needs.
type recorder struct {
	sdk       sdkclient.Client
	tools     *client.Client
	out       string
	namespace string
}

// scenario is one recorded call: run starts it and returns its workflow ID once it is closed.
type scenario struct {
	file string // relative to the output directory
	run  func(ctx context.Context, r *recorder) (workflowID string, err error)
}

func record(ctx context.Context, out string, only *regexp.Regexp) error {
	// The server, SDK and worker log every failed attempt, which several scenarios cause on
	// purpose: keep only errors of the server.
	logger, err := zap.NewDevelopment(zap.IncreaseLevel(zap.ErrorLevel))
	if err != nil {
		return fmt.Errorf("build logger: %w", err)
	}
	srv, err := devserver.Start(ctx, devserver.Options{Logger: logger})
	if err != nil {
		return fmt.Errorf("start dev server: %w", err)
	}
	defer func() { _ = srv.Stop() }()
	sdk, err := sdkclient.Dial(sdkclient.Options{HostPort: srv.FrontendAddress(), Namespace: srv.Namespace(), Logger: logging.Temporal(zap.NewNop())})
	if err != nil {
		return fmt.Errorf("dial %s: %w", srv.FrontendAddress(), err)
	}
	defer sdk.Close()
	reg, err := registry()
	if err != nil {
		return err
	}
	r := &recorder{sdk: sdk, tools: client.New(sdk, client.Options{Namespace: srv.Namespace()}), out: out, namespace: srv.Namespace()}

	// Canceled before any worker ran it: the first workflow task sees the cancel request.
	id, err := r.tools.Start(ctx, mustCall("call-canceled-early", toolbox.NameAdd, `{"left":1,"right":2}`))
	if err != nil {
		return fmt.Errorf("start early-canceled call: %w", err)
	}
	if err := r.tools.CancelByWorkflowID(ctx, id); err != nil {
		return fmt.Errorf("cancel early-canceled call: %w", err)
	}

	w, err := worker.New(sdk, srv.Namespace(), reg, worker.Options{})
	if err != nil {
		return fmt.Errorf("build worker: %w", err)
	}
	// The inline agent validates in its own workflow code: it runs on the toolgate worker, with
	// the worker's registry.
	fixtures.RegisterInlineRoundWorkflow(w, reg)
	fixtures.RegisterBudgetRoundWorkflow(w, reg)
	if err := w.Start(); err != nil {
		return fmt.Errorf("start worker: %w", err)
	}
	defer w.Stop()
	if !w.SearchAttributes() {
		return errors.New("the dev server's namespace lacks the search attributes")
	}
	parents := sdkworker.New(sdk, roundQueue, sdkworker.Options{})
	fixtures.RegisterRoundWorkflow(parents)
	fixtures.RegisterBudgetRoundWorkflow(parents, reg)
	r.tools.RegisterAwaitToolCall(parents)
	if err := parents.Start(); err != nil {
		return fmt.Errorf("start the round parents' worker: %w", err)
	}
	defer parents.Stop()
	if only.MatchString("canceled-before-start.json") {
		if err := r.write(ctx, "canceled-before-start.json", id); err != nil {
			return err
		}
	}
	for _, s := range slices.Concat(scenarios(), budgetScenarios(), policyScenarios(), consentScenarios(), askScenarios()) {
		if !only.MatchString(s.file) {
			continue
		}
		id, err := s.run(ctx, r)
		if err != nil {
			return fmt.Errorf("%s: %w", s.file, err)
		}
		if err := r.write(ctx, s.file, id); err != nil {
			return err
		}
	}
	return nil
}

// registry is the toolbox at its default configuration plus the fixtures.
func registry() (*toolcore.Registry, error) {
	tools, err := toolbox.Tools(toolbox.Config{})
	if err != nil {
		return nil, fmt.Errorf("build toolbox: %w", err)
	}
	reg, err := toolcore.NewRegistry(append(tools, fixtures.Tools()...)...)
	if err != nil {
		return nil, fmt.Errorf("build registry: %w", err)
	}
	return reg, nil
}

func scenarios() []scenario {
	return []scenario{
		{"success.json", execute(mustCall("call-add-1", toolbox.NameAdd, `{"left":20,"right":22}`))},
		// A call for a principal (docs/principals.md): the start's memo and the ExecuteTool input
		// carry it.
		{"principal.json", executeFor(toolcore.Principal{Issuer: "https://idp.example", Subject: "alice", Tenant: "acme",
			Groups: []string{"guests"}, AuthenticatedBy: toolcore.AuthenticatedByMCP}, mustCall("call-add-principal", toolbox.NameAdd, `{"left":1,"right":2}`))},
		{"arguments-invalid.json", execute(mustCall("call-add-invalid", toolbox.NameAdd, `{"left":"twenty","right":22}`))},
		{"not-found.json", execute(mustCall("call-unknown", "no_such_tool", `{}`))},
		{"invalid-call.json", invalidCall},
		{"canceled.json", cancelWhileRunning(mustCall("call-sleep", toolbox.NameSleep, `{"seconds":600}`))},
		{"fixtures/validation-failed.json", execute(mustCall("call-validator-panic", fixtures.ValidatorPanic, `{}`))},
		{"fixtures/execution-failed.json", execute(mustCall("call-fail", fixtures.Fail, `{}`))},
		{"fixtures/serialization-failed.json", execute(mustCall("call-opaque", fixtures.Opaque, `{}`))},
		{"fixtures/outcome-unknown.json", execute(mustCall("call-hang", fixtures.Hang, `{}`))},
		{"fixtures/retried.json", execute(mustCall("call-flaky", fixtures.Flaky, `{}`))},
		{"fixtures/fatal.json", execute(mustCall("call-fatal", fixtures.Fatal, `{}`))},
		{"fixtures/local-retried.json", execute(mustCall("call-local-flaky", fixtures.LocalFlaky, `{}`))},
		{"fixtures/approval-approved.json", decide(mustCall("call-approve", fixtures.Approve, `{}`), true)},
		{"fixtures/approval-rejected.json", decide(mustCall("call-reject", fixtures.Approve, `{}`), false)},
		{"fixtures/approval-edited.json", decideEdited(mustCall("call-approve-edited", fixtures.Approve, `{}`), json.RawMessage(`{"amount":100}`))},
		{"fixtures/approval-expired.json", execute(mustCall("call-expire", fixtures.ApproveExpires, `{}`))},
		{"fixtures/reconciled.json", execute(mustCall("call-reconciled", fixtures.Reconciled, `{}`))},
		{"fixtures/reconciled-checkpoint.json", execute(mustCall("call-reconciled-checkpoint", fixtures.ReconciledFromCheckpoint, `{}`))},
		{"fixtures/checkpointed.json", execute(mustCall("call-checkpointed", fixtures.Checkpointed, `{}`))},
		{"fixtures/approval-canceled.json", cancelAwaitingApproval(mustCall("call-approval-canceled", fixtures.Approve, `{}`))},
		// Parents: fixtures.RoundWorkflow runs rounds of calls as child workflows.
		{"rounds/parallel.json", round("round-parallel", false, [][]json.RawMessage{{
			rawCall("a", toolbox.NameAdd, `{"left":1,"right":2}`),
			rawCall("b", "no_such_tool", `{}`),
			rawCall("c", toolbox.NameEcho, `{"text":"hi"}`),
			rawCall("d", toolbox.NameAdd, `{"left":"x","right":2}`),
			json.RawMessage(`{"type":"toolCall"}`),
			rawCall("a", toolbox.NameAdd, `{"left":5,"right":5}`),
		}})},
		{"rounds/sequential.json", round("round-sequential", true, [][]json.RawMessage{
			{rawCall("a", toolbox.NameAdd, `{"left":1,"right":2}`), rawCall("b", toolbox.NameEcho, `{"text":"hi"}`)},
			{rawCall("c", toolbox.NameAdd, `{"left":3,"right":4}`)},
		})},
		{"rounds/fatal.json", round("round-fatal", false, [][]json.RawMessage{{
			rawCall("s1", fixtures.Sequential, `{}`),
			rawCall("f2", fixtures.Fatal, `{}`),
			rawCall("a3", toolbox.NameAdd, `{"left":1,"right":2}`),
			rawCall("s4", fixtures.Sequential, `{}`),
		}})},
		// UndoWorkflow (an operator's toolgate undo): two bookings compensated last first, each
		// compensation retried once, and an echo without a compensation skipped.
		{"undo/undo.json", undoRun},
		{"rounds/attached.json", attachedRound},
		{"rounds/canceled.json", canceledRound},
		// Agents: fixtures.InlineRoundWorkflow runs its rounds inline, one ExecuteTool activity
		// per call and no child workflow: outcomes of every kind beside a zero call and a
		// repeated ID, a ReadOnly call retried twice, a fatal error stopping the round.
		{"inline/parallel.json", inlineRound("inline-parallel", false, [][]json.RawMessage{{
			rawCall("a", toolbox.NameAdd, `{"left":1,"right":2}`),
			rawCall("b", "no_such_tool", `{}`),
			rawCall("c", toolbox.NameEcho, `{"text":"hi"}`),
			rawCall("d", toolbox.NameAdd, `{"left":"x","right":2}`),
			json.RawMessage(`{"type":"toolCall"}`),
			rawCall("a", toolbox.NameAdd, `{"left":5,"right":5}`),
		}})},
		{"inline/retried.json", inlineRound("inline-retried", false, [][]json.RawMessage{{
			rawCall("f", fixtures.Flaky, `{}`),
		}})},
		{"inline/fatal.json", inlineRound("inline-fatal", false, [][]json.RawMessage{{
			rawCall("s1", fixtures.Sequential, `{}`),
			rawCall("f2", fixtures.Fatal, `{}`),
			rawCall("a3", toolbox.NameAdd, `{"left":1,"right":2}`),
			rawCall("s4", fixtures.Sequential, `{}`),
		}})},
	}
}

// inlineRound runs fixtures.InlineRoundWorkflow with rounds to its end on the toolgate worker's
// queue, where it is registered.
func inlineRound(id string, sequential bool, rounds [][]json.RawMessage) func(context.Context, *recorder) (string, error) {
	return func(ctx context.Context, r *recorder) (string, error) {
		_, err := r.sdk.ExecuteWorkflow(ctx, sdkclient.StartWorkflowOptions{ID: id, TaskQueue: wire.DefaultTaskQueue},
			fixtures.InlineRoundWorkflowName, fixtures.RoundInput{Rounds: rounds, Sequential: sequential, Scope: id})
		if err != nil {
			return "", err
		}
		return id, r.waitClosed(ctx, id)
	}
}

// roundQueue is the task queue of the worker running fixtures.RoundWorkflow (the children run on
// the toolgate worker's default queue).
const roundQueue = "fixtures-rounds"

// round runs fixtures.RoundWorkflow with rounds to its end, whatever the outcome.
func round(scope string, sequential bool, rounds [][]json.RawMessage) func(context.Context, *recorder) (string, error) {
	return func(ctx context.Context, r *recorder) (string, error) {
		return r.startRound(ctx, scope, fixtures.RoundInput{Rounds: rounds, Sequential: sequential, Scope: scope})
	}
}

func (r *recorder) startRound(ctx context.Context, id string, in fixtures.RoundInput) (string, error) {
	_, err := r.sdk.ExecuteWorkflow(ctx, sdkclient.StartWorkflowOptions{ID: id, TaskQueue: roundQueue}, fixtures.RoundWorkflowName, in)
	if err != nil {
		return "", err
	}
	return id, r.waitClosed(ctx, id)
}

// attachedRound: a client runs call a first; the round then submits a again beside b, so its
// start of a is refused and it attaches through AwaitToolCall.
func attachedRound(ctx context.Context, r *recorder) (string, error) {
	const scope = "round-attached"
	first := client.New(r.sdk, client.Options{Scope: scope, Namespace: r.namespace})
	id, err := first.Start(ctx, mustCall("a", toolbox.NameAdd, `{"left":1,"right":2}`))
	if err != nil {
		return "", err
	}
	if err := r.waitClosed(ctx, id); err != nil {
		return "", err
	}
	return r.startRound(ctx, scope, fixtures.RoundInput{Scope: scope, Rounds: [][]json.RawMessage{{
		rawCall("a", toolbox.NameAdd, `{"left":1,"right":2}`),
		rawCall("b", toolbox.NameAdd, `{"left":2,"right":2}`),
	}}})
}

// canceledRound cancels the parent while its child's tool runs (it reported progress): the
// child is canceled and awaited, the parent ends canceled.
func canceledRound(ctx context.Context, r *recorder) (string, error) {
	const scope = "round-canceled"
	_, err := r.sdk.ExecuteWorkflow(ctx, sdkclient.StartWorkflowOptions{ID: scope, TaskQueue: roundQueue}, fixtures.RoundWorkflowName,
		fixtures.RoundInput{Scope: scope, Rounds: [][]json.RawMessage{{
			rawCall("s", toolbox.NameSleep, `{"seconds":600}`),
			rawCall("a", toolbox.NameAdd, `{"left":1,"right":2}`),
		}}})
	if err != nil {
		return "", err
	}
	if err := r.waitProgress(ctx, wire.WorkflowID(scope, "s")); err != nil {
		return "", err
	}
	if err := r.sdk.CancelWorkflow(ctx, scope, ""); err != nil {
		return "", err
	}
	return scope, r.waitClosed(ctx, scope)
}

func rawCall(id, name, arguments string) json.RawMessage {
	data, err := mustCall(id, name, arguments).MarshalJSON()
	if err != nil {
		panic(err)
	}
	return data
}

// decide starts call (its tool requires approval), waits until it waits for a decision, and
// approves or rejects it naming its hash.
func decide(call toolcore.ToolCall, approve bool) func(context.Context, *recorder) (string, error) {
	return func(ctx context.Context, r *recorder) (string, error) {
		id, err := r.tools.Start(ctx, call)
		if err != nil {
			return "", err
		}
		st, err := r.awaitingApproval(ctx, id)
		if err != nil {
			return "", err
		}
		d := wire.ApprovalDecision{CallHash: st.CallHash, Reviewer: "recorder", Reason: "recorded decision"}
		if _, err := r.tools.DecideByWorkflowID(ctx, id, approve, d); err != nil {
			return "", err
		}
		return id, r.waitClosed(ctx, id)
	}
}

// decideEdited starts call (its tool requires approval), waits until it waits for a decision, and
// approves it with the edited arguments args.
func decideEdited(call toolcore.ToolCall, args json.RawMessage) func(context.Context, *recorder) (string, error) {
	return func(ctx context.Context, r *recorder) (string, error) {
		id, err := r.tools.Start(ctx, call)
		if err != nil {
			return "", err
		}
		st, err := r.awaitingApproval(ctx, id)
		if err != nil {
			return "", err
		}
		d := wire.ApprovalDecision{CallHash: st.CallHash, Reviewer: "recorder", Arguments: args}
		if _, err := r.tools.DecideByWorkflowID(ctx, id, true, d); err != nil {
			return "", err
		}
		return id, r.waitClosed(ctx, id)
	}
}

// cancelAwaitingApproval starts call, waits until it waits for a decision, and cancels it.
func cancelAwaitingApproval(call toolcore.ToolCall) func(context.Context, *recorder) (string, error) {
	return func(ctx context.Context, r *recorder) (string, error) {
		id, err := r.tools.Start(ctx, call)
		if err != nil {
			return "", err
		}
		if _, err := r.awaitingApproval(ctx, id); err != nil {
			return "", err
		}
		if err := r.tools.CancelByWorkflowID(ctx, id); err != nil {
			return "", err
		}
		return id, r.waitClosed(ctx, id)
	}
}

// awaitingApproval polls the approval query until the call waits for a decision.
func (r *recorder) awaitingApproval(ctx context.Context, id string) (wire.ApprovalState, error) {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		st, err := r.tools.ApprovalByWorkflowID(ctx, id)
		if err == nil && st.Waiting {
			return st, nil
		}
		select {
		case <-ctx.Done():
			return wire.ApprovalState{}, fmt.Errorf("wait for %s to await approval: %w (last: %v)", id, ctx.Err(), err)
		case <-tick.C:
		}
	}
}

// execute runs call to its end; any outcome is fine, the history is what is recorded.
func execute(call toolcore.ToolCall) func(context.Context, *recorder) (string, error) {
	return func(ctx context.Context, r *recorder) (string, error) {
		id, err := r.tools.Start(ctx, call)
		if err != nil {
			return "", err
		}
		return id, r.waitClosed(ctx, id)
	}
}

// executeFor is execute with the call made for p.
func executeFor(p toolcore.Principal, call toolcore.ToolCall) func(context.Context, *recorder) (string, error) {
	return func(ctx context.Context, r *recorder) (string, error) {
		id, err := r.tools.Start(client.WithPrincipal(ctx, p), call)
		if err != nil {
			return "", err
		}
		return id, r.waitClosed(ctx, id)
	}
}

// undoRun books two slots and echoes once, then runs UndoWorkflow over the three effects as
// `toolgate undo` would, in completion order.
func undoRun(ctx context.Context, r *recorder) (string, error) {
	var effects []wire.UndoEffect
	for _, c := range []toolcore.ToolCall{
		mustCall("call-book-1", fixtures.Book, `{}`),
		mustCall("call-echo", toolbox.NameEcho, `{"text":"no effect"}`),
		mustCall("call-book-2", fixtures.Book, `{}`),
	} {
		res, err := r.tools.Execute(ctx, c)
		if err != nil {
			return "", err
		}
		effects = append(effects, wire.UndoEffect{ToolCallID: c.ID(), ToolName: c.Name(),
			IdempotencyKey: r.tools.WorkflowID(c.ID()), Output: res.Content()})
	}
	id := wire.UndoWorkflowIDPrefix + "run-recorded"
	_, err := r.sdk.ExecuteWorkflow(ctx, sdkclient.StartWorkflowOptions{ID: id, TaskQueue: wire.DefaultTaskQueue},
		wire.UndoWorkflowName, wire.UndoWorkflowInput{RunID: "run-recorded", Effects: effects})
	if err != nil {
		return "", err
	}
	return id, r.waitClosed(ctx, id)
}

// invalidCall starts the workflow with a payload that is not a tool call (the toolgate client
// refuses to, so the SDK client does).
func invalidCall(ctx context.Context, r *recorder) (string, error) {
	id := wire.WorkflowID("", "call-invalid")
	_, err := r.sdk.ExecuteWorkflow(ctx, sdkclient.StartWorkflowOptions{ID: id, TaskQueue: wire.DefaultTaskQueue},
		wire.ToolCallWorkflowName, json.RawMessage(`{"type":"toolCall","id":"call-invalid","name":"add"}`))
	if err != nil {
		return "", err
	}
	return id, r.waitClosed(ctx, id)
}

// cancelWhileRunning starts call, waits until its tool reported progress (it is running), and
// cancels it.
func cancelWhileRunning(call toolcore.ToolCall) func(context.Context, *recorder) (string, error) {
	return func(ctx context.Context, r *recorder) (string, error) {
		id, err := r.tools.Start(ctx, call)
		if err != nil {
			return "", err
		}
		if err := r.waitProgress(ctx, id); err != nil {
			return "", err
		}
		if err := r.tools.CancelByWorkflowID(ctx, id); err != nil {
			return "", err
		}
		return id, r.waitClosed(ctx, id)
	}
}

// waitProgress polls until the call's tool has reported progress (it is running); a call not
// started yet (a parent's child) is waited for.
func (r *recorder) waitProgress(ctx context.Context, id string) error {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if _, ok, err := r.tools.ProgressByWorkflowID(ctx, id); err != nil && !errors.Is(err, wire.ErrNotFound) {
			return err
		} else if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for progress of %s: %w", id, ctx.Err())
		case <-tick.C:
		}
	}
}

// waitClosed waits until the workflow is closed, whatever its outcome.
func (r *recorder) waitClosed(ctx context.Context, id string) error {
	err := r.sdk.GetWorkflow(ctx, id, "").Get(ctx, nil)
	if ctx.Err() != nil {
		return fmt.Errorf("wait for %s: %w", id, ctx.Err())
	}
	_ = err // failed and canceled workflows are outcomes too
	return nil
}

// write exports the closed workflow's history as JSON (the format of `temporal workflow show
// --output json` and `toolgate history`).
func (r *recorder) write(ctx context.Context, file, id string) error {
	if err := r.waitClosed(ctx, id); err != nil {
		return err
	}
	hist, err := client.New(r.sdk, client.Options{}).History(ctx, id, "")
	if err != nil {
		return err
	}
	data, err := client.HistoryJSON(hist)
	if err != nil {
		return err
	}
	path := filepath.Join(r.out, file)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(path), err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("write history: %w", err)
	}
	last := hist.Events[len(hist.Events)-1].GetEventType()
	fmt.Printf("%-36s %2d events %5d bytes protobuf %6d bytes JSON  %s\n",
		file, len(hist.Events), proto.Size(hist), len(data), last)
	return nil
}

func mustCall(id, name, arguments string) toolcore.ToolCall {
	call, err := toolcore.NewToolCall(id, name, []byte(arguments))
	if err != nil {
		panic(err)
	}
	return call
}
