package activities

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// CallbackURLs mints the URL of a tool's callback for the call of workflowID: unguessable,
// expiring after ttl, answerable once (the workflow keeps only the token's SHA-256 and refuses a
// second answer). Package callbacks serves and implements it.
type CallbackURLs interface {
	Mint(ctx context.Context, workflowID, key string, ttl time.Duration) (url, tokenSHA256 string, expires time.Time, err error)
}

// asking collects the attempt's questions; a local activity cannot ask (its workflow task cannot
// wait), so its tool's Ask fails.
func (a *Activities) asking(info activity.Info) *toolcore.Asking {
	if info.IsLocalActivity {
		return nil
	}
	return &toolcore.Asking{}
}

// callbacks is the attempt's toolcore.CallbackMinter, or nil when the worker serves none.
func (a *Activities) callbacks(info activity.Info) toolcore.CallbackMinter {
	if a.Callbacks == nil || info.IsLocalActivity {
		return nil
	}
	return callbackMinter{urls: a.Callbacks, workflowID: info.WorkflowExecution.ID}
}

// callbackMinter binds CallbackURLs to one call.
type callbackMinter struct {
	urls       CallbackURLs
	workflowID string
}

func (m callbackMinter) MintCallback(ctx context.Context, key string, ttl time.Duration) (string, string, time.Time, error) {
	return m.urls.Mint(ctx, m.workflowID, key, ttl)
}

// responses are the answers an ExecuteTool after a round carries, or nil.
func (r *InputResumption) responses() map[string]json.RawMessage {
	if r == nil {
		return nil
	}
	return r.Responses
}

// inputRequired is the non-retryable wire.ErrTypeInputRequired that ends an attempt whose tool
// asked: the questions (their params redacted of the attempt's secrets) and the attempt's last
// checkpoint, for the next attempt.
func inputRequired(ctx context.Context, call toolcore.ToolCall, sec *toolcore.Secrets, asked map[string]toolcore.InputRequest, checkpoint json.RawMessage) error {
	if sec.Len() > 0 {
		for k, r := range asked {
			if params, ok := sec.RedactCheckpoint(r.Params); ok {
				r.Params = params
			} else {
				r.Params = nil
			}
			asked[k] = r
		}
	}
	keys := toolcore.InputKeys(asked)
	activity.GetLogger(ctx).Info("Tool asks for input", "toolCallId", call.ID(), "toolName", call.Name(), "keys", keys)
	// Benign: asking is an outcome, not a worker problem, so the SDK does not log it as an error.
	return temporal.NewApplicationErrorWithOptions("the tool asks for input ("+strings.Join(keys, ", ")+")", wire.ErrTypeInputRequired,
		temporal.ApplicationErrorOptions{NonRetryable: true, Category: temporal.ApplicationErrorCategoryBenign,
			Details: []any{wire.InputRequired{Requests: asked, Checkpoint: checkpoint}}})
}
