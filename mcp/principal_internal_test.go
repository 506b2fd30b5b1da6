package mcp

import (
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/stretchr/testify/assert"

	"github.com/toolgate/toolgate/toolcore"
)

// callerPrincipal keeps only what a toolcore.Principal may carry: issuer and subject as the
// token has them, and of the claims a string tenant and name within the bounds and without
// control characters, and the distinct, non-empty, well-formed string groups up to
// toolcore.MaxPrincipalGroups; no token is no principal.
func TestCallerPrincipal(t *testing.T) {
	many := make([]any, 0, toolcore.MaxPrincipalGroups+6)
	want := make([]string, 0, toolcore.MaxPrincipalGroups)
	for i := range toolcore.MaxPrincipalGroups + 6 {
		many = append(many, fmt.Sprintf("g%d", i))
		if i < toolcore.MaxPrincipalGroups {
			want = append(want, fmt.Sprintf("g%d", i))
		}
	}
	long := strings.Repeat("x", toolcore.MaxPrincipalFieldBytes+1)
	info := func(claims map[string]any) *auth.TokenInfo {
		return &auth.TokenInfo{UserID: "alice", Extra: map[string]any{"iss": "https://idp", TokenClaimsExtra: claims}}
	}
	base := toolcore.Principal{Issuer: "https://idp", Subject: "alice", AuthenticatedBy: toolcore.AuthenticatedByMCP}
	with := func(edit func(*toolcore.Principal)) toolcore.Principal {
		p := base
		edit(&p)
		return p
	}
	tests := []struct {
		name   string
		give   *auth.TokenInfo
		claims PrincipalClaims
		want   toolcore.Principal
	}{
		{name: "no token", give: nil, want: toolcore.Principal{}},
		{name: "no subject", give: &auth.TokenInfo{}, want: toolcore.Principal{}},
		{name: "no claims", give: &auth.TokenInfo{UserID: "alice", Extra: map[string]any{"iss": "https://idp"}}, want: base},
		{name: "default claims", give: info(map[string]any{"tenant": "t1", "name": "Alice", "groups": []any{"a", "b"}}),
			want: with(func(p *toolcore.Principal) { p.Tenant, p.Name, p.Groups = "t1", "Alice", []string{"a", "b"} })},
		{name: "configured claims", give: info(map[string]any{"tid": "t2", "display": "A.", "roles": "admin", "tenant": "no"}),
			claims: PrincipalClaims{Tenant: "tid", Name: "display", Groups: "roles"},
			want:   with(func(p *toolcore.Principal) { p.Tenant, p.Name, p.Groups = "t2", "A.", []string{"admin"} })},
		{name: "wrong types left out", give: info(map[string]any{"tenant": 7, "name": []any{"x"}, "groups": map[string]any{"a": true}}), want: base},
		{name: "over bounds left out", give: info(map[string]any{"tenant": long, "name": "bad\x1bname", "groups": []any{long, "", "ok", "ok", 3, "a\nb"}}),
			want: with(func(p *toolcore.Principal) { p.Groups = []string{"ok"} })},
		{name: "groups past the limit dropped", give: info(map[string]any{"groups": many}),
			want: with(func(p *toolcore.Principal) { p.Groups = want })},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := callerPrincipal(tt.give, tt.claims)
			assert.Equal(t, tt.want, got)
			if !got.IsZero() {
				assert.NoError(t, got.Check())
			}
		})
	}
}

// TokenClaims decodes a compact JWT's payload, and nothing else.
func TestTokenClaims(t *testing.T) {
	assert.Equal(t, map[string]any{"sub": "a"}, TokenClaims("e30.eyJzdWIiOiJhIn0.sig"))
	for _, bad := range []string{"", "opaque-static-token", "a.b", "e30.!!!.sig", "e30.WzFd.sig", "a.b.c.d"} {
		assert.Nil(t, TokenClaims(bad), bad)
	}
}
