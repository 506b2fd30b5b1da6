package policy_test

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// doneWhen is issue 32's example: guests may not write files; add only when left < 1000.
const doneWhen = `permit (principal, action, resource);

@id("guests-no-write")
@reason("guests may not write files")
forbid (principal in Toolgate::Group::"guests", action == Toolgate::Action::"call", resource == Toolgate::Tool::"write_file");

@id("add-small")
@reason("add takes left below 1000")
forbid (principal, action, resource == Toolgate::Tool::"add")
unless { context.arguments has left && context.arguments.left < 1000 };

@id("echo-ask")
@reason("a human reads what echo says")
@effect("approve")
forbid (principal, action, resource == Toolgate::Tool::"echo")
when { context.arguments has text && context.arguments.text == "ask" };

forbid (principal, action, resource == Toolgate::Tool::"sleep")
when { principal.tenant == "blocked" && context.arguments.ms > 0 };
`

var (
	guest   = &toolcore.Principal{Issuer: "https://idp", Subject: "bob", Groups: []string{"guests"}}
	alice   = &toolcore.Principal{Issuer: "https://idp", Subject: "alice", Groups: []string{"staff"}, AuthenticatedBy: toolcore.AuthenticatedByMCP}
	blocked = &toolcore.Principal{Subject: "mallory", Tenant: "blocked"}
)

func mustParse(t testing.TB, text string) *policy.Set {
	t.Helper()
	s, err := policy.Parse("test.cedar", []byte(text))
	require.NoError(t, err)
	return s
}

func TestPolicyEvaluateDecisions(t *testing.T) {
	s := mustParse(t, doneWhen)
	tests := []struct {
		name       string
		give       policy.Request
		wantEffect string
		wantID     string
		wantReason string
	}{
		{name: "guest write_file denied", give: policy.Request{Principal: guest, Tool: policy.Tool{Name: "write_file"}, Arguments: json.RawMessage(`{"path":"a"}`)},
			wantEffect: wire.PolicyDeny, wantID: "guests-no-write", wantReason: "guests may not write files"},
		{name: "staff write_file allowed", give: policy.Request{Principal: alice, Tool: policy.Tool{Name: "write_file"}},
			wantEffect: wire.PolicyAllow},
		{name: "anonymous write_file allowed", give: policy.Request{Tool: policy.Tool{Name: "write_file"}},
			wantEffect: wire.PolicyAllow},
		{name: "add small allowed", give: policy.Request{Tool: policy.Tool{Name: "add"}, Arguments: json.RawMessage(`{"left":999,"right":1}`)},
			wantEffect: wire.PolicyAllow},
		{name: "add 1000 denied", give: policy.Request{Tool: policy.Tool{Name: "add"}, Arguments: json.RawMessage(`{"left":1000,"right":1}`)},
			wantEffect: wire.PolicyDeny, wantID: "add-small", wantReason: "add takes left below 1000"},
		{name: "add without left denied", give: policy.Request{Tool: policy.Tool{Name: "add"}, Arguments: json.RawMessage(`{}`)},
			wantEffect: wire.PolicyDeny, wantID: "add-small", wantReason: "add takes left below 1000"},
		{name: "add decimal left fails closed", give: policy.Request{Tool: policy.Tool{Name: "add"}, Arguments: json.RawMessage(`{"left":5.5}`)},
			wantEffect: wire.PolicyDeny, wantID: "add-small", wantReason: "add takes left below 1000"},
		{name: "add 1e2 is a Long", give: policy.Request{Tool: policy.Tool{Name: "add"}, Arguments: json.RawMessage(`{"left":1e2}`)},
			wantEffect: wire.PolicyAllow},
		{name: "number without Cedar value denies", give: policy.Request{Tool: policy.Tool{Name: "echo"}, Arguments: json.RawMessage(`{"x":0.12345}`)},
			wantEffect: wire.PolicyDeny, wantReason: "arguments at /x: the number 0.12345 is neither a Long (64-bit integer) nor a decimal (at most 4 decimals) (policies cannot see it)"},
		{name: "huge exponent denies", give: policy.Request{Tool: policy.Tool{Name: "echo"}, Arguments: json.RawMessage(`{"a":[1,{"b":1e999999999}]}`)},
			wantEffect: wire.PolicyDeny, wantReason: "arguments at /a/1/b: the number 1e999999999 is neither a Long (64-bit integer) nor a decimal (at most 4 decimals) (policies cannot see it)"},
		{name: "echo ask needs approval", give: policy.Request{Principal: alice, Tool: policy.Tool{Name: "echo"}, Arguments: json.RawMessage(`{"text":"ask"}`)},
			wantEffect: wire.PolicyApprove, wantID: "echo-ask", wantReason: "a human reads what echo says"},
		{name: "echo other allowed", give: policy.Request{Tool: policy.Tool{Name: "echo"}, Arguments: json.RawMessage(`{"text":"hi","n":null}`)},
			wantEffect: wire.PolicyAllow},
		{name: "positional id, no reason", give: policy.Request{Principal: blocked, Tool: policy.Tool{Name: "sleep"}, Arguments: json.RawMessage(`{"ms":5}`)},
			wantEffect: wire.PolicyDeny, wantID: "policy4"},
		{name: "failed forbid denies", give: policy.Request{Principal: blocked, Tool: policy.Tool{Name: "sleep"}, Arguments: json.RawMessage(`{}`)},
			wantEffect: wire.PolicyDeny, wantID: "policy4"},
		{name: "unmatched forbid allows", give: policy.Request{Principal: alice, Tool: policy.Tool{Name: "sleep"}, Arguments: json.RawMessage(`{}`)},
			wantEffect: wire.PolicyAllow},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := s.Evaluate(tt.give)
			assert.Equal(t, tt.wantEffect, got.Effect)
			assert.Equal(t, tt.wantID, got.PolicyID)
			assert.Equal(t, tt.wantReason, got.Reason)
			assert.Equal(t, s.Hash(), got.Hash)
			assert.False(t, got.LogOnly)
		})
	}
}

func TestPolicyDefaultDenyWithoutPermit(t *testing.T) {
	s := mustParse(t, `forbid (principal, action, resource == Toolgate::Tool::"rm");`)
	got := s.Evaluate(policy.Request{Tool: policy.Tool{Name: "echo"}})
	assert.Equal(t, policy.Decision{Hash: s.Hash(), Effect: wire.PolicyDeny}, got)
	assert.Equal(t, "no policy permits this call; the tool did not run", toolcore.PolicyDeniedMessage(got.PolicyID, got.Reason))
}

func TestPolicyEntities(t *testing.T) {
	s := mustParse(t, `
permit (principal, action, resource)
when { principal.subject == "alice" && principal.issuer == "https://idp" && principal.authenticated
  && principal.authenticatedBy == "mcp" && !principal.anonymous && principal has actor
  && principal.actor.subject == "run-1" && resource.sideEffect == "readOnly"
  && resource.annotations.readOnlyHint && !resource.requireApproval
  && context has calls && context.calls.total == 3 && context.calls.tool == 1 };
permit (principal, action, resource) when { principal.anonymous && principal.subject == "" };`)
	p := alice.Clone()
	p.Actor = &toolcore.Actor{Issuer: toolcore.ActorIssuerAgent, Subject: "run-1"}
	allowed := s.Evaluate(policy.Request{Principal: &p, Tool: policy.Tool{Name: "echo", SideEffect: toolcore.ReadOnly}, Calls: &policy.CallCounts{Total: 3, Tool: 1}})
	assert.Equal(t, wire.PolicyAllow, allowed.Effect)
	withoutCounts := s.Evaluate(policy.Request{Principal: &p, Tool: policy.Tool{Name: "echo", SideEffect: toolcore.ReadOnly}})
	assert.Equal(t, wire.PolicyDeny, withoutCounts.Effect)
	anonymous := s.Evaluate(policy.Request{Tool: policy.Tool{Name: "echo"}})
	assert.Equal(t, wire.PolicyAllow, anonymous.Effect)
}

func TestPolicyEvaluateDeterministic(t *testing.T) {
	var b strings.Builder
	b.WriteString("permit (principal, action, resource);\n")
	for i := range 20 {
		fmt.Fprintf(&b, "@id(\"f%02d\")\n@reason(\"r%02d\")\nforbid (principal, action, resource == Toolgate::Tool::\"echo\");\n", i, i)
	}
	s := mustParse(t, b.String())
	r := policy.Request{Principal: guest, Tool: policy.Tool{Name: "echo"}}
	for range 200 {
		got := s.Evaluate(r)
		require.Equal(t, "f00", got.PolicyID, "the first forbid in file order names the decision")
		require.Equal(t, "r00", got.Reason)
	}
}

func TestPolicyHashIsFileSHA256(t *testing.T) {
	a := mustParse(t, doneWhen)
	b := mustParse(t, doneWhen+"\n")
	assert.Equal(t, "sha256:", a.Hash()[:7])
	assert.Len(t, a.Hash(), 7+64)
	assert.NotEqual(t, a.Hash(), b.Hash(), "the hash is of the bytes: any change names a new set")
	assert.Equal(t, a.Hash(), mustParse(t, doneWhen).Hash())
	ids := []string{}
	for _, p := range a.Policies() {
		ids = append(ids, p.ID+"/"+p.Effect)
	}
	assert.Equal(t, []string{"policy0/permit", "guests-no-write/forbid", "add-small/forbid", "echo-ask/approve", "policy4/forbid"}, ids)
}

func TestPolicyParseRefuses(t *testing.T) {
	tests := []struct {
		name string
		give string
		want string
	}{
		{name: "syntax", give: "permit (principal, action, resource)\nforbid (principal,", want: "test.cedar:2:"},
		{name: "empty", give: "// nothing\n", want: "holds no policies"},
		{name: "duplicate id", give: `@id("a") permit (principal, action, resource); @id("a") forbid (principal, action, resource);`, want: `policy ID "a" is also the ID of policy 0`},
		{name: "positional id clash", give: `@id("policy1") permit (principal, action, resource); forbid (principal, action, resource);`, want: `policy ID "policy1"`},
		{name: "empty id", give: `@id("") permit (principal, action, resource);`, want: "@id"},
		{name: "long id", give: `@id("` + strings.Repeat("x", policy.MaxIDBytes+1) + `") permit (principal, action, resource);`, want: "129 bytes, limit 128"},
		{name: "long reason", give: `@reason("` + strings.Repeat("x", policy.MaxReasonBytes+1) + `") forbid (principal, action, resource);`, want: "@reason: 513 bytes"},
		{name: "control reason", give: "@reason(\"a\\u{7}b\") forbid (principal, action, resource);", want: "control or invisible character U+0007"},
		{name: "unknown effect", give: `@effect("deny") forbid (principal, action, resource);`, want: `the only effect is "approve"`},
		{name: "approve on permit", give: `@effect("approve") permit (principal, action, resource);`, want: "is for a forbid"},
		{name: "not utf-8", give: "permit (principal, action, resource); // \xff", want: "not UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := policy.Parse("test.cedar", []byte(tt.give))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	_, err := policy.Parse("big.cedar", make([]byte, policy.MaxFileBytes+1))
	assert.ErrorContains(t, err, "larger than")
}

func TestPolicyVisible(t *testing.T) {
	s := mustParse(t, doneWhen)
	tests := []struct {
		name      string
		principal *toolcore.Principal
		tool      string
		want      bool
	}{
		{name: "guest write_file hidden", principal: guest, tool: "write_file", want: false},
		{name: "staff write_file listed", principal: alice, tool: "write_file", want: true},
		{name: "add listed: denied for some arguments only", principal: guest, tool: "add", want: true},
		{name: "echo listed: approve policies never hide", principal: guest, tool: "echo", want: true},
		{name: "sleep listed: condition reads context", principal: blocked, tool: "sleep", want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, s.Visible(tt.principal, policy.Tool{Name: tt.tool}))
		})
	}
	onlyEcho := mustParse(t, `permit (principal, action, resource == Toolgate::Tool::"echo");`)
	assert.True(t, onlyEcho.Visible(guest, policy.Tool{Name: "echo"}))
	assert.False(t, onlyEcho.Visible(guest, policy.Tool{Name: "add"}), "no permit could match")
}

func TestPolicySourceLogOnly(t *testing.T) {
	var none *policy.Source
	_, ok := none.Decide(policy.Request{Tool: policy.Tool{Name: "write_file"}})
	assert.False(t, ok, "no source: nothing decided, nothing recorded")
	_, ok = policy.NewSource(nil, false).Decide(policy.Request{Tool: policy.Tool{Name: "write_file"}})
	assert.False(t, ok, "no set: nothing decided")

	src := policy.NewSource(mustParse(t, doneWhen), true)
	d, ok := src.Decide(policy.Request{Principal: guest, Tool: policy.Tool{Name: "write_file"}})
	require.True(t, ok)
	assert.Equal(t, wire.PolicyDeny, d.Effect)
	assert.True(t, d.LogOnly)
	assert.Equal(t, wire.PolicyAllow, d.Enforced(), "log-only never enforces")
}

func TestPolicyValidateAgainstSchema(t *testing.T) {
	guarded := strings.Replace(doneWhen, "context.arguments.ms > 0", "context.arguments has ms && context.arguments.ms > 0", 1)
	require.NoError(t, mustParse(t, guarded).Validate())
	assert.ErrorContains(t, mustParse(t, doneWhen).Validate(), "test.cedar:18: policy \"policy4\": for policy `policy4`, attribute `ms` in context")
	tests := []struct {
		name string
		give string
		want string
	}{
		{name: "misspelt attribute", give: "permit (principal, action, resource);\n@id(\"t\")\nforbid (principal, action, resource) when { principal.tenent == \"x\" };", want: "test.cedar:2: policy \"t\": for policy `t`, attribute `tenent` on entity type `Toolgate::User` not found"},
		{name: "unknown entity type", give: `forbid (principal in Toolgate::Grop::"x", action, resource);`, want: "unrecognized entity type `Toolgate::Grop`"},
		{name: "argument read without has", give: `forbid (principal, action, resource) when { context.arguments.left > 1 };`, want: "policy0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := mustParse(t, tt.give).Validate()
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

// TestPolicyDocExampleIsValid: the example set of docs/policy.md parses, validates against the
// schema and decides as the page says.
func TestPolicyDocExampleIsValid(t *testing.T) {
	page, err := os.ReadFile("../docs/policy.md")
	require.NoError(t, err)
	_, rest, ok := strings.Cut(string(page), "```cedar\n")
	require.True(t, ok, "docs/policy.md has a cedar block")
	text, _, ok := strings.Cut(rest, "```")
	require.True(t, ok)
	s := mustParse(t, text)
	require.NoError(t, s.Validate())
	write := func(p *toolcore.Principal, path string) policy.Decision {
		return s.Evaluate(policy.Request{Principal: p, Tool: policy.Tool{Name: "write_file"}, Arguments: json.RawMessage(`{"path":"` + path + `"}`)})
	}
	assert.Equal(t, "guests-no-write", write(guest, "/tmp/a").PolicyID)
	assert.Equal(t, wire.PolicyApprove, write(alice, "/etc/passwd").Effect)
	assert.Equal(t, wire.PolicyAllow, write(alice, "/tmp/a").Effect)
	add := s.Evaluate(policy.Request{Tool: policy.Tool{Name: "add"}, Arguments: json.RawMessage(`{"left":1000,"right":1}`)})
	assert.Equal(t, "add-small", add.PolicyID)
}
