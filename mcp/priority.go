package mcp

import (
	"fmt"
	"math"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/wire"
)

// The tools/call _meta keys of a call's priority and fairness (docs/contract.md section 10,
// docs/flow-control.md): "io.toolgate/priority" a number 1..5, "io.toolgate/fairnessKey" a string
// of at most 64 bytes, "io.toolgate/fairnessWeight" a positive number. A token's principal gets
// what its Grant allows of them, and its own fairness key (grants.go); the server's own
// principal gets what it asks for.
const (
	PriorityMeta       = wire.MCPPriorityMeta
	FairnessKeyMeta    = wire.MCPFairnessKeyMeta
	FairnessWeightMeta = wire.MCPFairnessWeightMeta
)

// metaPriority is the priority a tools/call's _meta asks for, or an invalid-params error naming
// the key that is malformed. What the call gets is grants.startContext's to decide.
func metaPriority(meta sdk.Meta) (wire.Priority, error) {
	var p wire.Priority
	if v, ok := meta[PriorityMeta]; ok {
		n, isNum := v.(float64)
		if !isNum || n != math.Trunc(n) || n < wire.MinPriorityLevel || n > wire.MaxPriorityLevel {
			return p, invalidParams(fmt.Sprintf("_meta %q must be an integer 1..5", PriorityMeta))
		}
		p.Level = int(n)
	}
	if v, ok := meta[FairnessKeyMeta]; ok {
		s, isString := v.(string)
		if !isString || s == "" || len(s) > wire.MaxFairnessKeyBytes {
			return p, invalidParams(fmt.Sprintf("_meta %q must be a non-empty string of at most 64 bytes", FairnessKeyMeta))
		}
		p.FairnessKey = s
	}
	if v, ok := meta[FairnessWeightMeta]; ok {
		n, isNum := v.(float64)
		if !isNum || !(n > 0) || n > 1e6 {
			return p, invalidParams(fmt.Sprintf("_meta %q must be a positive number", FairnessWeightMeta))
		}
		p.FairnessWeight = float32(n)
	}
	return p, nil
}
