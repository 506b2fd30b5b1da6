package wire

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// Flow control (docs/flow-control.md): the priority and fairness a call carries, the task queue of
// a flow-controlled tool, and the names an operator's override is recognized by.

// Priority levels of a call: 1 is dispatched first, 5 last; 0 is "unset", which the server treats
// as DefaultPriorityLevel. The server has 5 levels unless matching.priorityLevels says otherwise.
const (
	MinPriorityLevel     = 1
	MaxPriorityLevel     = 5
	DefaultPriorityLevel = 3
	// MaxFairnessKeyBytes is the server's limit on a fairness key; FairnessKeyOf shortens longer
	// keys.
	MaxFairnessKeyBytes = 64
)

// Priority is the priority and fairness of one call. Its zero value is "unset": the server's
// default priority (3) and the empty fairness key, which all unkeyed calls share.
type Priority struct {
	// Level is 1 (first) .. 5 (last). Optional: default 0 (unset, the server's default 3).
	Level int `json:"level,omitempty"`
	// FairnessKey groups calls that share a fair share of a task queue (an agent run, a user, a
	// tenant): with fairness enabled, the server dispatches round-robin across keys, weighted by
	// FairnessWeight, instead of first-in-first-out. At most 64 bytes (see FairnessKeyOf).
	// Optional: default "" (one shared key).
	FairnessKey string `json:"fairnessKey,omitempty"`
	// FairnessWeight scales the key's share (2 gets twice the share of 1). Optional: default 0
	// (unset, the server's 1 or an operator's override for the key).
	FairnessWeight float32 `json:"fairnessWeight,omitempty"`
}

// IsZero reports whether p is unset.
func (p Priority) IsZero() bool { return p == Priority{} }

// Check rejects a level outside 0..5, a key over 64 bytes and a negative or non-finite weight.
func (p Priority) Check() error {
	switch {
	case p.Level < 0 || p.Level > MaxPriorityLevel:
		return fmt.Errorf("priority %d out of range 1..%d", p.Level, MaxPriorityLevel)
	case len(p.FairnessKey) > MaxFairnessKeyBytes:
		return fmt.Errorf("fairness key of %d bytes exceeds %d", len(p.FairnessKey), MaxFairnessKeyBytes)
	case p.FairnessWeight < 0 || p.FairnessWeight != p.FairnessWeight || p.FairnessWeight > 1e6:
		return fmt.Errorf("fairness weight %v must be positive and finite", p.FairnessWeight)
	}
	return nil
}

// FairnessKeyOf returns s as a fairness key: s itself when it fits in 64 bytes, otherwise its
// first 40 bytes, "~" and 23 hex digits of its SHA-256 (distinct long IDs keep distinct keys).
// An agent workflow's calls default to FairnessKeyOf(its workflow ID).
func FairnessKeyOf(s string) string {
	if len(s) <= MaxFairnessKeyBytes {
		return s
	}
	sum := sha256.Sum256([]byte(s))
	return strings.ToValidUTF8(s[:40], "") + "~" + hex.EncodeToString(sum[:])[:23]
}

// ToolTaskQueueInfix separates a main task queue from a tool name in the queue of a
// flow-controlled tool: "<main>/tool/<name>".
const ToolTaskQueueInfix = "/tool/"

// ToolTaskQueue is the task queue of a tool that declares a rate limit or a concurrency limit and
// no TaskQueue of its own: the server enforces a rate limit per task queue, and a worker bounds the
// concurrency of a queue, so such a tool gets a queue of its own.
func ToolTaskQueue(mainQueue, tool string) string { return mainQueue + ToolTaskQueueInfix + tool }

// The MCP tools/call _meta keys of a call's priority (docs/contract.md section 10): a number 1..5,
// a string of at most 64 bytes, a positive number.
const (
	MCPPriorityMeta       = "io.toolgate/priority"
	MCPFairnessKeyMeta    = "io.toolgate/fairnessKey"
	MCPFairnessWeightMeta = "io.toolgate/fairnessWeight"
)

// Reasons recorded with UpdateTaskQueueConfig (the config's metadata.reason). A worker sets a
// tool's declared per-key rate limit with LimitReasonDeclared and never replaces a value whose
// reason is anything else (an operator's, LimitReasonOperator from `toolgate limits set`).
const (
	LimitReasonDeclared = "toolgate: declared by the tool"
	LimitReasonOperator = "toolgate limits set"
)
