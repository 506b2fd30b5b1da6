package mcp

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// Fair shares. Every call a token's principal starts runs for that principal
// (client.WithPrincipal: the start memo, the ToolSubject attribute, toolcore.CallPrincipal) with
// the principal's own fairness key, client.PrincipalFairnessKey: a _meta fairness key is checked
// for form and otherwise ignored (matching has one level of keys, so a key of the caller's
// choosing would be another share, or another principal's). The _meta priority and fairness
// weight are clamped to the principal's Grant. The server's own principal (stdio, an
// unauthenticated listener) starts its calls with no principal and gets the _meta it asks for:
// whoever reaches such a server is its operator.

// DefaultGrant is what a principal no grant names gets: priority no better than the server's
// default level (3), fairness weight at most 1.
var DefaultGrant = Grant{MaxPriority: wire.DefaultPriorityLevel, MaxWeight: 1}

// Grant is what a principal's tools/call _meta may ask for.
type Grant struct {
	// MaxPriority is the best (lowest) priority level it may ask for, 1..5: a call asking for a
	// better one gets this one, and a level worse than the default 3 applies to calls asking for
	// none too. Optional: default Grants.Default's.
	MaxPriority int `json:"maxPriority,omitempty"`
	// MaxWeight is the largest fairness weight it may ask for (a call asking for none gets the
	// server's 1, or MaxWeight when that is less). Optional: default Grants.Default's.
	MaxWeight float32 `json:"maxWeight,omitempty"`
}

// Grants say what each principal's _meta may ask for. They work at their zero value: every
// principal gets DefaultGrant.
type Grants struct {
	// Default is the grant of a principal no other entry names. Optional: default DefaultGrant.
	Default Grant
	// Principals are grants by toolcore.Principal.Key ("<issuer> <subject>", the subject alone
	// without an issuer): one of them wins over any group's. Optional.
	Principals map[string]Grant
	// Groups are grants by group: a principal in several gets the best priority and the largest
	// weight among them. Optional.
	Groups map[string]Grant
}

// Grant selectors of ParseGrant.
const (
	GrantPrincipalPrefix = "principal:"
	GrantGroupPrefix     = "group:"
	GrantDefault         = "*"
)

// Add adds a grant written SELECTOR=priority:N,weight:W (either part may be left out), where
// SELECTOR is "principal:<issuer> <subject>" (toolcore.Principal.Key), "group:<group>" or "*"
// (the default), as `toolgate mcp --principal-grant` takes it.
func (g *Grants) Add(spec string) error {
	selector, terms, ok := strings.Cut(spec, "=")
	if !ok {
		return fmt.Errorf("grant %q: want SELECTOR=priority:N,weight:W", spec)
	}
	var grant Grant
	for term := range strings.SplitSeq(terms, ",") {
		name, value, _ := strings.Cut(strings.TrimSpace(term), ":")
		switch name {
		case "priority":
			n, err := strconv.Atoi(value)
			if err != nil || n < wire.MinPriorityLevel || n > wire.MaxPriorityLevel {
				return fmt.Errorf("grant %q: priority must be 1..5", spec)
			}
			grant.MaxPriority = n
		case "weight":
			w, err := strconv.ParseFloat(value, 32)
			if err != nil || !(w > 0) || w > 1e6 {
				return fmt.Errorf("grant %q: weight must be a positive number up to 1e6", spec)
			}
			grant.MaxWeight = float32(w)
		default:
			return fmt.Errorf("grant %q: unknown term %q (priority:N, weight:W)", spec, term)
		}
	}
	switch {
	case selector == GrantDefault:
		g.Default = grant
	case strings.HasPrefix(selector, GrantPrincipalPrefix) && len(selector) > len(GrantPrincipalPrefix):
		if g.Principals == nil {
			g.Principals = map[string]Grant{}
		}
		g.Principals[strings.TrimPrefix(selector, GrantPrincipalPrefix)] = grant
	case strings.HasPrefix(selector, GrantGroupPrefix) && len(selector) > len(GrantGroupPrefix):
		if g.Groups == nil {
			g.Groups = map[string]Grant{}
		}
		g.Groups[strings.TrimPrefix(selector, GrantGroupPrefix)] = grant
	default:
		return fmt.Errorf("grant %q: the selector is principal:<issuer> <subject>, group:<group> or *", spec)
	}
	return nil
}

// For is p's grant: its principal entry, else the best of its groups', else Default; a field an
// entry leaves out is Default's (DefaultGrant's).
func (g Grants) For(p toolcore.Principal) Grant {
	base := fill(g.Default, DefaultGrant)
	if grant, ok := g.Principals[p.Key()]; ok {
		return fill(grant, base)
	}
	var best Grant
	found := false
	for _, group := range p.Groups {
		grant, ok := g.Groups[group]
		if !ok {
			continue
		}
		grant = fill(grant, base)
		if !found {
			best, found = grant, true
			continue
		}
		best.MaxPriority = min(best.MaxPriority, grant.MaxPriority)
		best.MaxWeight = max(best.MaxWeight, grant.MaxWeight)
	}
	if found {
		return best
	}
	return base
}

// fill is grant with the fields it leaves out taken from base.
func fill(grant, base Grant) Grant {
	if grant.MaxPriority == 0 {
		grant.MaxPriority = base.MaxPriority
	}
	if grant.MaxWeight == 0 {
		grant.MaxWeight = base.MaxWeight
	}
	return grant
}

// Clamp is the priority a call of p asking for asked starts with: asked's level and weight
// within p's grant, and p's own fairness key (client.PrincipalFairnessKey) whatever asked names.
func (g Grants) Clamp(p toolcore.Principal, asked wire.Priority) wire.Priority {
	grant := g.For(p)
	out := wire.Priority{FairnessKey: client.PrincipalFairnessKey(p)}
	level := asked.Level
	if level == 0 {
		level = wire.DefaultPriorityLevel
	}
	level = max(level, grant.MaxPriority)
	if asked.Level != 0 || level != wire.DefaultPriorityLevel {
		out.Level = level
	}
	weight := asked.FairnessWeight
	if weight == 0 {
		weight = 1
	}
	weight = float32(math.Min(float64(weight), float64(grant.MaxWeight)))
	if asked.FairnessWeight != 0 || weight != 1 {
		out.FairnessWeight = weight
	}
	return out
}

// startContext returns ctx for starting the call of a tools/call with meta: for a token's
// principal, client.WithPrincipal and the priority its grant allows (Clamp); for the server's
// own, the priority meta asks for. A malformed _meta priority is invalid params.
func (g Grants) startContext(ctx context.Context, meta sdk.Meta) (context.Context, error) {
	asked, err := metaPriority(meta)
	if err != nil {
		return ctx, err
	}
	p := callerOf(ctx).principal
	if p.IsZero() {
		if !asked.IsZero() {
			ctx = client.WithPriority(ctx, asked)
		}
		return ctx, nil
	}
	return client.WithPriority(client.WithPrincipal(ctx, p), g.Clamp(p, asked)), nil
}
