package mcp

import (
	"context"
	"fmt"
	"math"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/wire"
)

// The tools/call _meta keys of a call's priority and fairness (docs/contract.md section 10,
// docs/flow-control.md): "io.toolgate/priority" a number 1..5, "io.toolgate/fairnessKey" a string
// of at most 64 bytes, "io.toolgate/fairnessWeight" a positive number.
const (
	PriorityMeta       = wire.MCPPriorityMeta
	FairnessKeyMeta    = wire.MCPFairnessKeyMeta
	FairnessWeightMeta = wire.MCPFairnessWeightMeta
)

// withPriority returns ctx carrying the priority a tools/call's _meta asks for (client.WithPriority),
// or an invalid-params error naming the key that is malformed.
func withPriority(ctx context.Context, meta sdk.Meta) (context.Context, error) {
	var p wire.Priority
	if v, ok := meta[PriorityMeta]; ok {
		n, isNum := v.(float64)
		if !isNum || n != math.Trunc(n) || n < wire.MinPriorityLevel || n > wire.MaxPriorityLevel {
			return ctx, invalidParams(fmt.Sprintf("_meta %q must be an integer 1..5", PriorityMeta))
		}
		p.Level = int(n)
	}
	if v, ok := meta[FairnessKeyMeta]; ok {
		s, isString := v.(string)
		if !isString || s == "" || len(s) > wire.MaxFairnessKeyBytes {
			return ctx, invalidParams(fmt.Sprintf("_meta %q must be a non-empty string of at most 64 bytes", FairnessKeyMeta))
		}
		p.FairnessKey = s
	}
	if v, ok := meta[FairnessWeightMeta]; ok {
		n, isNum := v.(float64)
		if !isNum || !(n > 0) || n > 1e6 {
			return ctx, invalidParams(fmt.Sprintf("_meta %q must be a positive number", FairnessWeightMeta))
		}
		p.FairnessWeight = float32(n)
	}
	if p.IsZero() {
		return ctx, nil
	}
	return client.WithPriority(ctx, p), nil
}
