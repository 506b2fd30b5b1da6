package main

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	tgclient "github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/toolcore"
)

// TestStatusPrincipalLine: status shows whom a call runs for, escaped (a caller names it), and
// --json carries the principal object; a call without one has no line.
func TestStatusPrincipalLine(t *testing.T) {
	st := tgclient.Status{WorkflowID: "toolcall-c1", ToolCallID: "c1", ToolName: "echo", State: tgclient.Running, Attempt: 1}
	var none bytes.Buffer
	require.NoError(t, writeStatus(&none, st, nil, false))
	assert.NotContains(t, none.String(), "principal")

	p := toolcore.Principal{Issuer: "https://idp", Subject: "mallory\x1b[31m", Tenant: "acme", Groups: []string{"guests", "eng"},
		Actor: &toolcore.Actor{Subject: "agent-1"}, AuthenticatedBy: toolcore.AuthenticatedByMCP}
	st.Principal = &p
	var text, js bytes.Buffer
	require.NoError(t, writeStatus(&text, st, nil, false))
	require.NoError(t, writeStatus(&js, st, nil, true))
	assert.Contains(t, text.String(), "\nprincipal ")
	assert.Contains(t, text.String(), `(https://idp), tenant acme, via agent-1, authenticated by mcp, groups guests eng`)
	assert.NotContains(t, text.String(), "\x1b", "no raw control byte reaches the terminal")
	var got statusJSON
	require.NoError(t, json.Unmarshal(js.Bytes(), &got))
	require.NotNil(t, got.Principal)
	assert.Equal(t, p, *got.Principal)

	asserted := toolcore.Principal{Subject: "alice"}
	st.Principal = &asserted
	text.Reset()
	require.NoError(t, writeStatus(&text, st, nil, false))
	assert.Contains(t, text.String(), "alice, asserted")
}
