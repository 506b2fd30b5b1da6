package activities

import (
	"context"
	"errors"
	"fmt"

	"go.temporal.io/sdk/activity"

	"github.com/toolgate/toolgate/blobs"
	"github.com/toolgate/toolgate/toolcore"
)

// keepParts stores the parts of a Rich output in the worker's part store (Activities.Parts) and
// returns what the rest of the attempt completes: the model-facing output, the parts' claims
// (which the workflow records in the result) and the tool's error.
//
//   - Not a Rich, or the tool failed: output, no claims, toolErr, as they were.
//   - Parts that break the bounds (toolcore.ValidateParts): the Rich itself, so toolcore.Complete
//     makes it TOOL_OUTPUT_SERIALIZATION_FAILED naming the part.
//   - Parts to store and no store, or the store failing: an error (TOOL_EXECUTION_FAILED), transient
//     when the store failed, so a ReadOnly or Idempotent tool runs again; what was stored is
//     deleted (the sweep removes what a delete misses).
//
// Every text part is redacted of the attempt's secrets before it is stored or claimed inline;
// other parts' bytes are stored as the tool returned them.
func (a *Activities) keepParts(ctx context.Context, sec *toolcore.Secrets, output any, toolErr error) (any, []toolcore.PartClaim, error) {
	model, parts, ok := toolcore.SplitRich(output)
	if toolErr != nil || !ok {
		return output, nil, toolErr
	}
	if toolcore.ValidateParts(parts) != nil {
		return output, nil, nil
	}
	claims := make([]toolcore.PartClaim, 0, len(parts))
	for _, p := range parts {
		if p.Type == toolcore.PartText && sec.Len() > 0 {
			p.Data = []byte(sec.Redact(string(p.Data)))
		}
		if !toolcore.PartInline(p) && a.Parts == nil {
			a.dropParts(ctx, claims)
			return nil, nil, fmt.Errorf("the tool returned %s to keep, but this worker has no part store (worker.Options.Parts)", countParts(parts))
		}
		claim, err := blobs.Save(ctx, a.Parts, p)
		if err != nil {
			// The model reads the result: the store's error (paths, database) goes to the log.
			activity.GetLogger(ctx).Warn("Could not keep a result's part", "type", string(p.Type), "size", len(p.Data), "error", err)
			a.dropParts(ctx, claims)
			return nil, nil, toolcore.Transient(errors.New("the result's parts could not be kept: the part store failed (the worker's log says why)"))
		}
		claims = append(claims, claim)
	}
	return model, claims, nil
}

// dropParts deletes parts stored for an attempt that will not record them.
func (a *Activities) dropParts(ctx context.Context, claims []toolcore.PartClaim) {
	for _, c := range claims {
		if !c.Stored() {
			continue
		}
		if err := a.Parts.Delete(ctx, c.Key); err != nil {
			activity.GetLogger(ctx).Warn("Could not delete an unrecorded part; the sweep will", "key", c.Key, "error", err)
		}
	}
}

// countParts says "1 part" or "N parts".
func countParts(parts []toolcore.Part) string {
	if len(parts) == 1 {
		return "1 part"
	}
	return fmt.Sprintf("%d parts", len(parts))
}

// linkedParts are the claims an output records: none for an error result (a Rich whose Output
// could not be serialized), whose stored parts are deleted.
func (a *Activities) linkedParts(ctx context.Context, claims []toolcore.PartClaim, isError bool) []toolcore.PartClaim {
	if !isError {
		return claims
	}
	a.dropParts(ctx, claims)
	return nil
}
