package toolcore_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/toolcore"
)

// TestPrincipalWireShape: a principal encodes to the documented JSON and back.
func TestPrincipalWireShape(t *testing.T) {
	p := toolcore.Principal{Issuer: "https://idp", Subject: "alice", Tenant: "acme", Name: "Alice", Groups: []string{"eng", "guests"},
		Actor: &toolcore.Actor{Issuer: toolcore.ActorIssuerAgent, Subject: "agent-1", Name: "Agent"}, AuthenticatedBy: toolcore.AuthenticatedByMCP}
	data, err := json.Marshal(p)
	require.NoError(t, err)
	assert.JSONEq(t, `{"issuer":"https://idp","subject":"alice","tenant":"acme","name":"Alice","groups":["eng","guests"],
		"actor":{"issuer":"toolgate:agent","subject":"agent-1","name":"Agent"},"authenticatedBy":"mcp"}`, string(data))
	var back toolcore.Principal
	require.NoError(t, json.Unmarshal(data, &back))
	assert.Equal(t, p, back)
	data, err = json.Marshal(toolcore.Principal{Subject: "bob"})
	require.NoError(t, err)
	assert.JSONEq(t, `{"subject":"bob"}`, string(data), "optional fields are omitted")
}

// TestPrincipalCheck: Check refuses what no component may carry, and accepts the bounds.
func TestPrincipalCheck(t *testing.T) {
	long := strings.Repeat("x", toolcore.MaxPrincipalFieldBytes)
	groups := make([]string, toolcore.MaxPrincipalGroups)
	for i := range groups {
		groups[i] = "g" + strings.Repeat("x", i)
	}
	for _, ok := range []toolcore.Principal{
		{Subject: "alice"},
		{Issuer: long, Subject: long, Tenant: long, Name: "Ünïcode naïve 名前", Groups: groups},
		{Subject: "a", Actor: &toolcore.Actor{Subject: "agent"}, AuthenticatedBy: toolcore.AuthenticatedByFrontend},
	} {
		assert.NoError(t, ok.Check(), "%+v", ok)
	}
	for want, bad := range map[string]toolcore.Principal{
		"subject is required":       {Issuer: "https://idp"},
		"issuer has 257 bytes":      {Issuer: long + "x", Subject: "a"},
		"65 groups":                 {Subject: "a", Groups: append(groups, "one-more")},
		"group 0 is empty":          {Subject: "a", Groups: []string{""}},
		`group "g" is listed twice`: {Subject: "a", Groups: []string{"g", "g"}},
		"actor subject is required": {Subject: "a", Actor: &toolcore.Actor{Issuer: "x"}},
		"subject holds the control": {Subject: "al\nice"},
		"name holds the control":    {Subject: "a", Name: "bidi\u202eevil"},
		"tenant is not UTF-8":       {Subject: "a", Tenant: "\xff"},
		`authenticatedBy "me"`:      {Subject: "a", AuthenticatedBy: "me"},
	} {
		err := bad.Check()
		if assert.Error(t, err, want) {
			assert.Contains(t, err.Error(), want)
		}
	}
}

// TestPrincipalIdentity: issuer and subject are the identity; String marks asserted principals.
func TestPrincipalIdentity(t *testing.T) {
	a := toolcore.Principal{Issuer: "https://a", Subject: "alice", Groups: []string{"eng"}}
	b := toolcore.Principal{Issuer: "https://b", Subject: "alice"}
	assert.False(t, a.Same(b), "same subject, other issuer: another principal")
	assert.True(t, a.Same(toolcore.Principal{Issuer: "https://a", Subject: "alice", Tenant: "t"}))
	assert.NotEqual(t, a.Key(), b.Key())
	assert.Equal(t, "alice", toolcore.Principal{Subject: "alice"}.Key())
	assert.True(t, a.InGroup("eng"))
	assert.False(t, a.InGroup("guests"))
	assert.Equal(t, "alice (https://a), asserted", a.String())
	assert.Equal(t, "alice (https://b), tenant t, via agent-1, authenticated by mcp",
		toolcore.Principal{Issuer: "https://b", Subject: "alice", Tenant: "t", Actor: &toolcore.Actor{Subject: "agent-1"}, AuthenticatedBy: "mcp"}.String())
	assert.Equal(t, "none", toolcore.Principal{}.String())
}

// TestCallPrincipal: a tool reads the principal of its execution, as its own copy.
func TestCallPrincipal(t *testing.T) {
	_, ok := toolcore.CallPrincipal(context.Background())
	assert.False(t, ok, "outside an execution")
	_, ok = toolcore.CallPrincipal(toolcore.WithExecution(context.Background(), toolcore.Execution{ToolCallID: "c"}))
	assert.False(t, ok, "a call without a principal")
	p := &toolcore.Principal{Subject: "alice", Groups: []string{"eng"}}
	ctx := toolcore.WithExecution(context.Background(), toolcore.Execution{ToolCallID: "c", Principal: p})
	got, ok := toolcore.CallPrincipal(ctx)
	require.True(t, ok)
	got.Groups[0] = "admin"
	again, _ := toolcore.CallPrincipal(ctx)
	assert.Equal(t, []string{"eng"}, again.Groups, "a tool cannot change the principal another reads")
}
