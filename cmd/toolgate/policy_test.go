package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// recordedPolicyHistories are the calls recorded under fixtures.RecordedPolicy (guests
// may not echo; add only below 1000): denied-group, denied-arguments, allowed, log-only.
const recordedPolicyHistories = "../../testdata/histories/policy"

func writePolicy(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "candidate.cedar")
	require.NoError(t, os.WriteFile(path, []byte(text), 0o600))
	return path
}

func TestPolicyCheckCommand(t *testing.T) {
	tests := []struct {
		name       string
		give       string
		wantCode   int
		wantOut    string
		wantErrOut string
	}{
		{name: "valid", give: "permit (principal, action, resource);\n@id(\"no-guests\") @reason(\"no\")\nforbid (principal in Toolgate::Group::\"guests\", action, resource);\n",
			wantCode: 0, wantOut: "2 policies)\n  line 1: permit policy0\n  line 2: forbid no-guests\n"},
		{name: "syntax error names line and column", give: "permit (principal, action, resource);\nforbid (principal,\n",
			wantCode: 1, wantErrOut: "candidate.cedar:3:1"},
		{name: "schema error", give: "permit (principal, action, resource) when { principal.tenent == \"a\" };\n",
			wantCode: 1, wantErrOut: "attribute `tenent` on entity type `Toolgate::User` not found"},
		{name: "approve on permit", give: "@effect(\"approve\") permit (principal, action, resource);\n",
			wantCode: 1, wantErrOut: "is for a forbid"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runIn([]string{"policy", "check", writePolicy(t, tt.give)}, nil, "")
			assert.Equal(t, tt.wantCode, code, errOut)
			assert.Contains(t, out, tt.wantOut)
			assert.Contains(t, errOut, tt.wantErrOut)
		})
	}
	code, _, _ := runIn([]string{"policy", "check", filepath.Join(t.TempDir(), "missing.cedar")}, nil, "")
	assert.Equal(t, ExitUsage, code)
}

// TestPolicyTestCommandListsChangedCalls decides the recorded calls again with candidate sets and
// checks the exact list of changed calls: a call recorded without a decision counts as allow.
func TestPolicyTestCommandListsChangedCalls(t *testing.T) {
	dir := t.TempDir()
	entries, err := os.ReadDir(recordedPolicyHistories)
	require.NoError(t, err)
	for _, e := range append(entries, nil) {
		src := filepath.Join(recordedPolicyHistories, "..", "success.json") // add 20+22, no policy recorded
		if e != nil {
			src = filepath.Join(recordedPolicyHistories, e.Name())
		}
		b, err := os.ReadFile(src)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, filepath.Base(src)), b, 0o600))
	}
	const base = "permit (principal, action, resource);\n"
	tests := []struct {
		name     string
		give     string
		wantCode int
		want     []string
	}{
		{name: "the recorded set changes nothing", wantCode: 0, give: base +
			"@id(\"guests-no-echo\") forbid (principal in Toolgate::Group::\"guests\", action, resource == Toolgate::Tool::\"echo\");\n" +
			"@id(\"add-small\") forbid (principal, action, resource == Toolgate::Tool::\"add\") unless { context.arguments has left && context.arguments.left < 1000 };\n"},
		{name: "a higher add limit allows the big add only", wantCode: 1, give: base +
			"@id(\"guests-no-echo\") forbid (principal in Toolgate::Group::\"guests\", action, resource == Toolgate::Tool::\"echo\");\n" +
			"@id(\"add-smaller\") forbid (principal, action, resource == Toolgate::Tool::\"add\") unless { context.arguments has left && context.arguments.left < 10000 };\n",
			want: []string{"CHANGED denied-arguments.json toolcall-call-policy-add-big add \"https://idp.example alice\": deny add-small -> allow"}},
		{name: "a tiny add limit denies the unrecorded call too", wantCode: 1, give: base +
			"@id(\"guests-no-echo\") forbid (principal in Toolgate::Group::\"guests\", action, resource == Toolgate::Tool::\"echo\");\n" +
			"@id(\"add-tiny\") forbid (principal, action, resource == Toolgate::Tool::\"add\") unless { context.arguments has left && context.arguments.left < 5 };\n",
			want: []string{
				"CHANGED allowed.json toolcall-call-policy-add-small add \"https://idp.example bob\": allow -> deny add-tiny",
				"CHANGED success.json toolcall-call-add-1 add anonymous: allow -> deny add-tiny",
			}},
		{name: "allow everything", wantCode: 1, give: base, want: []string{
			"CHANGED denied-arguments.json toolcall-call-policy-add-big add \"https://idp.example alice\": deny add-small -> allow",
			"CHANGED denied-group.json toolcall-call-policy-echo-guest echo \"https://idp.example bob\": deny guests-no-echo -> allow",
			"CHANGED log-only.json toolcall-call-policy-echo-logonly echo \"https://idp.example bob\": deny guests-no-echo -> allow",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runIn([]string{"policy", "test", writePolicy(t, tt.give), "--histories", dir}, nil, "")
			assert.Equal(t, tt.wantCode, code, errOut)
			var lines []string
			for l := range strings.Lines(out) {
				lines = append(lines, strings.TrimSuffix(l, "\n"))
			}
			assert.Equal(t, tt.want, lines)
			assert.Contains(t, errOut, "5 calls decided")
		})
	}
	code, _, errOut := runIn([]string{"policy", "test", writePolicy(t, base)}, nil, "")
	assert.Equal(t, ExitUsage, code)
	code, _, _ = runIn([]string{"policy", "test", writePolicy(t, base), "--histories", dir, "--since", "1h"}, nil, "")
	assert.Equal(t, ExitUsage, code, "one source at a time")
	assert.Contains(t, errOut, "give one of --histories DIR and --since TIME")
}

// TestPolicyWorkerFlags: a worker refuses --policy-log-only without --policy, and a policy file
// that does not load, before dialing (exit 2, not a connection failure).
func TestPolicyWorkerFlags(t *testing.T) {
	bad := writePolicy(t, "forbid (principal,")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{name: "log-only alone", args: []string{"worker", "--policy-log-only"}, want: "--policy-log-only needs --policy FILE"},
		{name: "invalid file", args: []string{"worker", "--policy", bad}, want: "candidate.cedar:1:19"},
		{name: "missing file", args: []string{"worker", "--policy", filepath.Join(t.TempDir(), "none.cedar")}, want: "no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errOut := runIn(append(tt.args, "--address", "127.0.0.1:1"), nil, "")
			assert.Equal(t, ExitUsage, code, errOut)
			assert.Contains(t, errOut, tt.want)
		})
	}
}
