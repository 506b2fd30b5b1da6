package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/toolgate/toolgate/mcp"
)

// mcpPrincipalFlags are the flags of `toolgate mcp` on whom calls run for: the token claims of
// a principal's groups, tenant and name, the grants of _meta priority and fairness weight, and
// the per-principal caps of --listen.
type mcpPrincipalFlags struct {
	groupsClaim, tenantClaim, nameClaim string
	grants                              []string
	maxSessions, maxStreams, maxCalls   int
}

// mcpPrincipalHelp is the paragraph of `toolgate mcp --help` on principals.
const mcpPrincipalHelp = `Principals: every call a token's request starts runs for its principal: the tool reads it
(toolcore.CallPrincipal) and the call's history records it (the token's issuer and subject, the
tenant, name and groups of the claims --principal-tenant-claim, --principal-name-claim and
--principal-groups-claim name; authenticatedBy "mcp"). Its fairness key is the principal's own
(a "_meta" fairness key is ignored), and its "_meta" priority and fairness weight are clamped to
its grant: --principal-grant SELECTOR=priority:N,weight:W, SELECTOR "principal:<issuer>
<subject>", "group:<group>" or "*" (the default: priority:3,weight:1, no better than the default
level). Calls without a token run for no principal, with the "_meta" they ask for. Each token's
principal has caps of its own, answered 429 Too Many Requests naming the cap:
--max-sessions-per-principal live sessions, --max-streams-per-principal standalone SSE streams,
--max-calls-per-principal requests in flight; and it opens a session only while more of
--max-sessions are free than it holds, so no principal takes the last ones from the others.`

func addMCPPrincipalFlags(cmd *cobra.Command, f *mcpPrincipalFlags) {
	fs := cmd.Flags()
	fs.StringArrayVar(&f.grants, "principal-grant", nil, "what a principal's tools/call _meta may ask for, SELECTOR=priority:N,weight:W; SELECTOR is 'principal:<issuer> <subject>', 'group:<group>' or '*' (default priority:3,weight:1; repeat)")
	fs.StringVar(&f.groupsClaim, "principal-groups-claim", mcp.DefaultGroupsClaim, "token claim of the principal's groups (an array of strings, or a string)")
	fs.StringVar(&f.tenantClaim, "principal-tenant-claim", mcp.DefaultTenantClaim, "token claim of the principal's tenant (e.g. tid)")
	fs.StringVar(&f.nameClaim, "principal-name-claim", mcp.DefaultNameClaim, "token claim of the principal's display name")
	fs.IntVar(&f.maxSessions, "max-sessions-per-principal", mcp.DefaultMaxSessionsPerPrincipal, "live MCP sessions of one token principal; an initialize beyond gets 429")
	fs.IntVar(&f.maxStreams, "max-streams-per-principal", mcp.DefaultMaxStreamsPerPrincipal, "standalone SSE streams one token principal holds open; one more gets 429")
	fs.IntVar(&f.maxCalls, "max-calls-per-principal", mcp.DefaultMaxCallsPerPrincipal, "requests one token principal has in flight (a tools/call until its result); one more gets 429")
}

// serverOptions are the principal options of the MCP server: the claims and the grants (a
// malformed --principal-grant is bad input).
func (f mcpPrincipalFlags) serverOptions() (mcp.PrincipalClaims, mcp.Grants, error) {
	claims := mcp.PrincipalClaims{Groups: f.groupsClaim, Tenant: f.tenantClaim, Name: f.nameClaim}
	var grants mcp.Grants
	for _, spec := range f.grants {
		if err := grants.Add(spec); err != nil {
			return claims, grants, badInput(fmt.Errorf("--principal-grant: %w", err))
		}
	}
	return claims, grants, nil
}

// httpOptions sets the per-principal caps of the HTTP handler.
func (f mcpPrincipalFlags) httpOptions(opts *mcp.HTTPOptions) {
	opts.MaxSessionsPerPrincipal = f.maxSessions
	opts.MaxStreamsPerPrincipal = f.maxStreams
	opts.MaxCallsPerPrincipal = f.maxCalls
}
