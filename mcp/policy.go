package mcp

import (
	"context"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/toolcore"
)

// Policy on tools/list. The workers decide each call (POLICY_DENIED); the MCP front only keeps a
// caller from seeing the tools it may never call: with Options.Policy, tools/list (every
// revision: the 2025-11-25 session's and 2026-07-28's stateless requests go through the same
// receiving middleware) lists a tool unless policy.Set.Visible says the set denies every call of
// it by the request's principal, whatever the arguments. A listed tool may still be denied for
// some arguments; a hidden one called anyway is decided by the worker as any call is. In
// log-only mode nothing is hidden.

// policyLister filters tools/list results by the policy set in force.
type policyLister struct {
	src   *policy.Source
	infos map[string]toolcore.ToolInfo
}

// installPolicyList adds the tools/list filter of src to s; a nil src installs nothing.
func installPolicyList(s *sdk.Server, src *policy.Source, tools []toolcore.ToolInfo) {
	if src == nil {
		return
	}
	l := &policyLister{src: src, infos: make(map[string]toolcore.ToolInfo, len(tools))}
	for _, info := range tools {
		l.infos[info.Name] = info
	}
	s.AddReceivingMiddleware(l.middleware)
}

func (l *policyLister) middleware(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil || method != "tools/list" {
			return res, err
		}
		list, ok := res.(*sdk.ListToolsResult)
		if !ok || list == nil {
			return res, err
		}
		return l.filter(ctx, list), nil
	}
}

// filter returns list without the tools the request's principal may never call (a copy; list
// is left alone).
func (l *policyLister) filter(ctx context.Context, list *sdk.ListToolsResult) *sdk.ListToolsResult {
	set := l.src.Current()
	if set == nil || l.src.LogOnly() {
		return list
	}
	var principal *toolcore.Principal
	if p := RequestPrincipal(ctx); !p.IsZero() {
		principal = &p
	}
	filtered := *list
	filtered.Tools = make([]*sdk.Tool, 0, len(list.Tools))
	for _, t := range list.Tools {
		if t == nil {
			continue
		}
		tool := policy.Tool{Name: t.Name}
		if info, ok := l.infos[t.Name]; ok {
			tool = policy.ToolOfInfo(info)
		}
		if set.Visible(principal, tool) {
			filtered.Tools = append(filtered.Tools, t)
		}
	}
	return &filtered
}
