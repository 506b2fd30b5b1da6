package toolcore

import "encoding/json"

// ToolInfo is what a tool shows to clients and models, as plain data: the entry of a tool
// catalog (toolgate tools --json, the worker's catalog a client lists) and the input of the
// provider formats. It encodes to
// {"name","description","sideEffect","inputSchema","outputSchema"?,"definitionHash"}.
type ToolInfo struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// SideEffect is SideEffect.String(): "unsafe", "idempotent" or "readOnly".
	SideEffect string `json:"sideEffect"`
	// InputSchema is the canonical input JSON Schema (Tool.InputSchema).
	InputSchema json.RawMessage `json:"inputSchema"`
	// OutputSchema is the canonical output JSON Schema; absent when the tool has none.
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	// DefinitionHash is Tool.DefinitionHash.
	DefinitionHash string `json:"definitionHash"`
	// RequireApproval is Options.RequireApproval: every call waits for a human decision.
	RequireApproval bool `json:"requireApproval,omitempty"`
	// SideEffectAssumed is Options.SideEffectAssumed: the class was assumed, not declared.
	SideEffectAssumed bool `json:"sideEffectAssumed,omitempty"`
	// ApprovalByCaller is Options.ApprovalByCaller: the caller's human may decide its approvals.
	ApprovalByCaller bool `json:"approvalByCaller,omitempty"`
	// Cost is Options.Cost: the cost units a call spends from a budget; absent when 0.
	Cost int64 `json:"cost,omitempty"`
	// Credentials is Options.Credentials: the providers (and scopes) whose token of the calling
	// principal a call needs; absent when none. Names only: never a token.
	Credentials []Credential `json:"credentials,omitempty"`
	// Interactive is Options.Interactive: a call may ask its caller mid-run (the MCP front
	// relays the questions of these tools' calls to its clients).
	Interactive bool `json:"interactive,omitempty"`
}

// Info returns the tool's ToolInfo (fresh copies of the schemas); the zero ToolInfo for the zero
// Tool.
func (t Tool) Info() ToolInfo {
	if t.d == nil {
		return ToolInfo{}
	}
	return ToolInfo{
		Name:              t.d.name,
		Description:       t.d.description,
		SideEffect:        t.d.options.SideEffect.String(),
		InputSchema:       t.InputSchema(),
		OutputSchema:      t.OutputSchema(),
		DefinitionHash:    t.d.hash,
		RequireApproval:   t.d.options.RequireApproval,
		SideEffectAssumed: t.d.options.SideEffectAssumed,
		ApprovalByCaller:  t.d.options.ApprovalByCaller,
		Cost:              t.d.options.Cost,
		Credentials:       cloneCredentials(t.d.options.Credentials),
		Interactive:       t.d.options.Interactive,
	}
}

// Infos returns the ToolInfo of every registered tool, in name order.
func (r *Registry) Infos() []ToolInfo {
	names := r.Names()
	infos := make([]ToolInfo, 0, len(names))
	for _, name := range names {
		if t, ok := r.Get(name); ok {
			infos = append(infos, t.Info())
		}
	}
	return infos
}

// cloneCredentials is a deep copy of cs (nil for none).
func cloneCredentials(cs []Credential) []Credential {
	if len(cs) == 0 {
		return nil
	}
	out := make([]Credential, len(cs))
	for i, c := range cs {
		out[i] = Credential{Provider: c.Provider, Scopes: append([]string(nil), c.Scopes...)}
	}
	return out
}
