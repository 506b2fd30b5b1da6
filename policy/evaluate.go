package policy

import (
	"encoding/json"
	"iter"

	"github.com/cedar-policy/cedar-go"
	"github.com/cedar-policy/cedar-go/types"

	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// The Cedar names of toolgate's entities (package documentation, "Entities").
const (
	UserType   cedar.EntityType = "Toolgate::User"
	GroupType  cedar.EntityType = "Toolgate::Group"
	ToolType   cedar.EntityType = "Toolgate::Tool"
	ActionType cedar.EntityType = "Toolgate::Action"
	// ActionCall is the ID of the one action, Toolgate::Action::"call".
	ActionCall = "call"
)

// Decision is what Evaluate decides, in the shape the workflow records (wire.PolicyDecision).
type Decision = wire.PolicyDecision

// Tool is what a policy sees of a tool: the resource Toolgate::Tool::"<Name>".
type Tool struct {
	Name              string
	SideEffect        toolcore.SideEffect
	RequireApproval   bool
	SideEffectAssumed bool
}

// ToolOf is the Tool of t.
func ToolOf(t toolcore.Tool) Tool {
	o := t.Options()
	return Tool{Name: t.Name(), SideEffect: o.SideEffect, RequireApproval: o.RequireApproval, SideEffectAssumed: o.SideEffectAssumed}
}

// ToolOfInfo is the Tool of a catalog entry (an unknown sideEffect is Unsafe).
func ToolOfInfo(info toolcore.ToolInfo) Tool {
	se := toolcore.Unsafe
	switch info.SideEffect {
	case toolcore.ReadOnly.String():
		se = toolcore.ReadOnly
	case toolcore.Idempotent.String():
		se = toolcore.Idempotent
	}
	return Tool{Name: info.Name, SideEffect: se, RequireApproval: info.RequireApproval, SideEffectAssumed: info.SideEffectAssumed}
}

// CallCounts are the calls a run has made, this one included, when the caller keeps count (an
// agent run under a budget: workflows.RunCallCounts).
type CallCounts struct {
	// Total counts every call of the run.
	Total int64
	// Tool counts the run's calls of this call's tool.
	Tool int64
}

// Request is one call to decide.
type Request struct {
	// Principal is whom the call runs for. Optional: default the anonymous principal.
	Principal *toolcore.Principal
	// Tool is the called tool. Required.
	Tool Tool
	// Arguments are the validated arguments (a JSON object). Optional: default {}.
	Arguments json.RawMessage
	// Calls are the run's call counts (context.calls). Optional: default absent.
	Calls *CallCounts
}

// Evaluate decides r (package documentation, "Decisions"). The decision carries the set's hash;
// it is never LogOnly (the caller sets that). It reads nothing but s and r: the same inputs
// always give the same decision.
func (s *Set) Evaluate(r Request) (d Decision) {
	defer func() {
		// Evaluation runs in workflow code, where a panic would wedge the call's workflow task:
		// a set that cannot be evaluated denies (fail closed).
		if recover() != nil {
			d = Decision{Hash: s.hash, Effect: wire.PolicyDeny, Reason: "the policy set could not be evaluated"}
		}
	}()
	d = Decision{Hash: s.hash, Effect: wire.PolicyAllow}
	args, err := argumentsRecord(r.Arguments)
	if err != nil {
		d.Effect, d.Reason = wire.PolicyDeny, err.Error()
		return d
	}
	ents := newEntities(r.Principal, r.Tool)
	req := cedar.Request{
		Principal: ents.user.UID,
		Action:    actionCall,
		Resource:  ents.tool.UID,
		Context:   contextRecord(args, r.Calls),
	}
	decision, diag := cedar.Authorize(s.authz, ents, req)
	switch id, matched := s.firstForbid(diag); {
	case decision == cedar.Deny && len(diag.Reasons) > 0:
		// Reasons are the matching forbids in file order.
		return s.decided(d, wire.PolicyDeny, string(diag.Reasons[0].PolicyID))
	case matched:
		// A forbid whose evaluation failed denies: fail closed (Cedar would skip it).
		return s.decided(d, wire.PolicyDeny, id)
	case decision == cedar.Deny:
		// No permit matched: Cedar's default deny names no policy.
		d.Effect = wire.PolicyDeny
		return d
	}
	if len(s.approve) == 0 {
		return d
	}
	// The approve policies are forbids: a match (or a failed evaluation) asks a human.
	decision, diag = cedar.Authorize(s.approve, ents, req)
	if decision == cedar.Deny && len(diag.Reasons) > 0 {
		return s.decided(d, wire.PolicyApprove, string(diag.Reasons[0].PolicyID))
	}
	if len(diag.Errors) > 0 {
		return s.decided(d, wire.PolicyApprove, string(diag.Errors[0].PolicyID))
	}
	return d
}

// decided is d with effect by the policy with id and its reason.
func (s *Set) decided(d Decision, effect, id string) Decision {
	d.Effect, d.PolicyID = effect, id
	if i, ok := s.byID[id]; ok {
		d.Reason = s.policies[i].reason
	}
	return d
}

// firstForbid returns the first forbid of diag's errors (in file order).
func (s *Set) firstForbid(diag cedar.Diagnostic) (string, bool) {
	for _, e := range diag.Errors {
		if i, ok := s.byID[string(e.PolicyID)]; ok && s.policies[i].forbid {
			return string(e.PolicyID), true
		}
	}
	return "", false
}

var actionCall = cedar.NewEntityUID(ActionType, ActionCall)

// policyList iterates policies in file order (Cedar's own PolicySet iterates a map): the
// diagnostic's reasons, and so a decision's policy ID, are deterministic.
type policyList []listed

type listed struct {
	id    cedar.PolicyID
	p     *cedar.Policy
	index int
}

// All implements cedar.PolicyIterator.
func (l policyList) All() iter.Seq2[cedar.PolicyID, *cedar.Policy] {
	return func(yield func(cedar.PolicyID, *cedar.Policy) bool) {
		for _, e := range l {
			if !yield(e.id, e.p) {
				return
			}
		}
	}
}

// entities are the entities of one request: its user, the user's groups, the tool and the
// action. Built from the request only.
type entities struct {
	user   cedar.Entity
	groups []cedar.EntityUID
	tool   cedar.Entity
}

// Get implements cedar.EntityGetter.
func (e *entities) Get(uid cedar.EntityUID) (cedar.Entity, bool) {
	switch {
	case uid == e.user.UID:
		return e.user, true
	case uid == e.tool.UID:
		return e.tool, true
	case uid == actionCall:
		return cedar.Entity{UID: uid}, true
	case uid.Type == GroupType:
		for _, g := range e.groups {
			if g == uid {
				return cedar.Entity{UID: uid}, true
			}
		}
	}
	return cedar.Entity{}, false
}

func newEntities(p *toolcore.Principal, t Tool) *entities {
	e := &entities{}
	anonymous := p == nil || p.IsZero()
	var pr toolcore.Principal
	if !anonymous {
		pr = *p
	}
	attrs := cedar.RecordMap{
		"issuer":          cedar.String(pr.Issuer),
		"subject":         cedar.String(pr.Subject),
		"tenant":          cedar.String(pr.Tenant),
		"name":            cedar.String(pr.Name),
		"authenticatedBy": cedar.String(pr.AuthenticatedBy),
		"authenticated":   cedar.Boolean(pr.Authenticated()),
		"anonymous":       cedar.Boolean(anonymous),
	}
	if a := pr.Actor; a != nil {
		attrs["actor"] = cedar.NewRecord(cedar.RecordMap{
			"issuer":  cedar.String(a.Issuer),
			"subject": cedar.String(a.Subject),
			"name":    cedar.String(a.Name),
		})
	}
	e.groups = make([]cedar.EntityUID, len(pr.Groups))
	for i, g := range pr.Groups {
		e.groups[i] = cedar.NewEntityUID(GroupType, cedar.String(g))
	}
	e.user = cedar.Entity{
		UID:        cedar.NewEntityUID(UserType, cedar.String(pr.Key())),
		Parents:    cedar.NewEntityUIDSet(e.groups...),
		Attributes: cedar.NewRecord(attrs),
	}
	readOnly, idempotent := t.SideEffect == toolcore.ReadOnly, t.SideEffect != toolcore.Unsafe
	e.tool = cedar.Entity{
		UID: cedar.NewEntityUID(ToolType, cedar.String(t.Name)),
		Attributes: cedar.NewRecord(cedar.RecordMap{
			"sideEffect":        cedar.String(t.SideEffect.String()),
			"requireApproval":   cedar.Boolean(t.RequireApproval),
			"sideEffectAssumed": cedar.Boolean(t.SideEffectAssumed),
			"annotations": cedar.NewRecord(cedar.RecordMap{
				"readOnlyHint":    cedar.Boolean(readOnly),
				"destructiveHint": cedar.Boolean(!idempotent),
				"idempotentHint":  cedar.Boolean(idempotent),
			}),
		}),
	}
	return e
}

// contextRecord is the request's context: {arguments, calls?}.
func contextRecord(args cedar.Record, calls *CallCounts) cedar.Record {
	m := cedar.RecordMap{"arguments": args}
	if calls != nil {
		m["calls"] = cedar.NewRecord(cedar.RecordMap{"total": cedar.Long(calls.Total), "tool": cedar.Long(calls.Tool)})
	}
	return cedar.NewRecord(m)
}

var _ types.EntityGetter = (*entities)(nil)
