package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	sdkclient "go.temporal.io/sdk/client"

	"github.com/toolgate/toolgate/internal/fixtures"
	"github.com/toolgate/toolgate/wire"
)

// askScenarios are calls of fixtures.Ask, whose tool asks "proceed?" mid-run: answered, the
// tool runs again with the answer and resumes from its checkpoint.
func askScenarios() []scenario {
	return []scenario{{"fixtures/ask-answered.json", askAnswered}}
}

// askAnswered starts a fixtures.Ask call, waits until it awaits input, and accepts.
func askAnswered(ctx context.Context, r *recorder) (string, error) {
	id, err := r.tools.Start(ctx, mustCall("call-ask-answered", fixtures.Ask, `{}`))
	if err != nil {
		return "", err
	}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		v, err := r.sdk.QueryWorkflow(ctx, id, "", wire.QueryInput)
		var st wire.InputState
		if err == nil && v.Get(&st) == nil && st.Waiting {
			break
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("wait for %s to await input: %w (last: %v)", id, ctx.Err(), err)
		case <-tick.C:
		}
	}
	h, err := r.sdk.UpdateWorkflow(ctx, sdkclient.UpdateWorkflowOptions{WorkflowID: id, UpdateName: wire.UpdateInput,
		WaitForStage: sdkclient.WorkflowUpdateStageCompleted,
		Args: []any{wire.InputAnswer{Round: 1, By: "recordhistories",
			Responses: map[string]json.RawMessage{fixtures.AskKey: json.RawMessage(`{"action":"accept","content":{"confirm":true}}`)}}}})
	if err != nil {
		return "", err
	}
	if err := h.Get(ctx, nil); err != nil {
		return "", err
	}
	return id, r.waitClosed(ctx, id)
}
