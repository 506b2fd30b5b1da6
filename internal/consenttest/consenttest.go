package consenttest

import (
	"encoding/json"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// Request is the consent a call waits for when its arguments name none. Its URL carries markup in
// a query value, so a reader that does not escape it shows.
var Request = wire.ConsentRequest{
	Provider: "example",
	Scopes:   []string{"repo", "read:user"},
	URL:      "https://auth.example.com/authorize?client_id=toolgate&state=st-1&note=<script>alert(1)</script>",
}

// Wait is how long the consent stays valid (Request.Expires and the state's Deadline, from the
// wait's start).
const Wait = time.Hour

// Args are the arguments a call may give to choose its request: Provider and URL replace
// Request's. Any tool name works.
type Args struct {
	Provider string `json:"provider,omitempty"`
	URL      string `json:"url,omitempty"`
}

// Content is the content of the result of a call whose consent came.
const Content = `{"consented":true}`

// Workflow is the stand-in ToolCallWorkflow: it waits for wire.SignalConsent, then completes with
// Content; a signal whose Refused is set ends it with a TOOL_EXECUTION_FAILED result.
func Workflow(ctx workflow.Context, input json.RawMessage) (toolcore.Result, error) {
	call, err := toolcore.ParseToolCall(input)
	if err != nil {
		return toolcore.Result{}, temporal.NewNonRetryableApplicationError(err.Error(), "InvalidToolCall", nil)
	}
	req := Request
	var args Args
	if json.Unmarshal(call.Arguments().Raw(), &args) == nil {
		if args.Provider != "" {
			req.Provider = args.Provider
		}
		if args.URL != "" {
			req.URL = args.URL
		}
	}
	now := workflow.Now(ctx).UTC()
	req.Expires = now.Add(Wait)
	state := wire.ConsentState{Waiting: true, Request: req, Since: now, Deadline: now.Add(Wait)}
	if err := workflow.SetQueryHandler(ctx, wire.QueryConsent, func() (wire.ConsentState, error) { return state, nil }); err != nil {
		return toolcore.Result{}, err
	}
	workflow.SetCurrentDetails(ctx, Details(req))
	outcome := temporal.NewSearchAttributeKeyKeyword(wire.SearchAttributeToolOutcome)
	if err := workflow.UpsertTypedSearchAttributes(ctx, outcome.ValueSet(wire.OutcomeAwaitingConsent)); err != nil {
		return toolcore.Result{}, err
	}
	var sig wire.ConsentSignal
	workflow.GetSignalChannel(ctx, wire.SignalConsent).Receive(ctx, &sig)
	if ctx.Err() != nil {
		return toolcore.Result{}, temporal.NewCanceledError()
	}
	state.Waiting = false
	workflow.SetCurrentDetails(ctx, "running "+call.Name())
	if err := workflow.UpsertTypedSearchAttributes(ctx, outcome.ValueUnset()); err != nil {
		return toolcore.Result{}, err
	}
	if sig.Refused != "" {
		return toolcore.ErrorResult(call, toolcore.CodeToolExecutionFailed, "the principal refused consent to "+req.Provider), nil
	}
	return toolcore.SuccessResult(call, Content), nil
}

// Details is the workflow's current details while it waits for req, in the real workflow's form.
func Details(req wire.ConsentRequest) string {
	return "awaiting consent to " + req.Provider + ": " + req.URL
}

// Start runs Workflow as ToolCallWorkflow on taskQueue until stop is called.
func Start(c client.Client, taskQueue string) (stop func(), err error) {
	w := worker.New(c, taskQueue, worker.Options{})
	w.RegisterWorkflowWithOptions(Workflow, workflow.RegisterOptions{Name: wire.ToolCallWorkflowName})
	if err := w.Start(); err != nil {
		return nil, err
	}
	return w.Stop, nil
}
