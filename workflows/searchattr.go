package workflows

import (
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// Search attribute keys (all Keyword), named in package wire.
func toolNameKey() temporal.SearchAttributeKeyKeyword {
	return temporal.NewSearchAttributeKeyKeyword(wire.SearchAttributeToolName)
}

func toolSubjectKey() temporal.SearchAttributeKeyKeyword {
	return temporal.NewSearchAttributeKeyKeyword(wire.SearchAttributeToolSubject)
}

func toolCallIDKey() temporal.SearchAttributeKeyKeyword {
	return temporal.NewSearchAttributeKeyKeyword(wire.SearchAttributeToolCallID)
}

func toolOutcomeKey() temporal.SearchAttributeKeyKeyword {
	return temporal.NewSearchAttributeKeyKeyword(wire.SearchAttributeToolOutcome)
}

// upsertOutcome records how the call ended, once, just before the workflow closes: in the metrics
// (always, see MetricToolCalls) and in the search attributes. ToolName and ToolCallId are
// upserted too unless the workflow already has these values (a toolgate client sets them at
// start), so calls started by other SDKs or the Temporal CLI are searchable as well, and a
// toolgate call's history does not carry them twice. Nothing is upserted unless the worker says
// the namespace has the attributes: an unknown attribute would fail the workflow task.
func (w *Workflows) upsertOutcome(ctx workflow.Context, call toolcore.ToolCall, outcome string) {
	w.countOutcome(ctx, call, outcome)
	if !w.SearchAttributes {
		return
	}
	updates := []temporal.SearchAttributeUpdate{toolOutcomeKey().ValueSet(outcome)}
	if !call.IsZero() {
		have := workflow.GetTypedSearchAttributes(ctx) // deterministic: the start's and earlier upserts'
		for _, kv := range []struct {
			key  temporal.SearchAttributeKeyKeyword
			want string
		}{{toolNameKey(), call.Name()}, {toolCallIDKey(), call.ID()}} {
			if v, ok := have.GetKeyword(kv.key); !ok || v != kv.want {
				updates = append(updates, kv.key.ValueSet(kv.want))
			}
		}
	}
	if outcome == wire.OutcomeOK && okUnset(ctx) {
		// Started with the rule, an ok call never records ToolOutcome, whether or not its start
		// set ToolName and ToolCallId (a child started without CallOptions.SearchAttributes, a
		// client whose detection failed): ok is one form, "unset", for every call toolgate
		// starts (wire.QueryOKCalls finds it). Searchable at start, it closes at the price of a
		// bare workflow. The upsert left, if any, is the same command as before the rule held
		// here (replay compares its type, not its attributes).
		updates = updates[1:]
		if len(updates) == 0 {
			return
		}
	}
	if err := workflow.UpsertTypedSearchAttributes(ctx, updates...); err != nil {
		// Only a malformed update fails here (checked before any command); the outcome itself
		// is in the result and history, so the call is not failed for its index entry.
		workflow.GetLogger(ctx).Warn("Upsert ToolOutcome", "error", err)
	}
}

// okUnsetKey marks a workflow context whose call was started with wire.OutcomeRuleOKUnset.
type okUnsetKey struct{}

// withOutcomeRule returns ctx marked when input carries wire.OutcomeRuleOKUnset: the input is
// fixed at start, so the mark is the same on every replay.
func withOutcomeRule(ctx workflow.Context, input Input) workflow.Context {
	if p := input.Payload(); p != nil && string(p.GetMetadata()[wire.MetadataOutcomeRule]) == wire.OutcomeRuleOKUnset {
		return workflow.WithValue(ctx, okUnsetKey{}, true)
	}
	return ctx
}

// okUnset reports whether ctx was marked by withOutcomeRule.
func okUnset(ctx workflow.Context) bool {
	v, _ := ctx.Value(okUnsetKey{}).(bool)
	return v
}
