package mcp

import (
	"context"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/toolcore"
)

// listPolicy hides write_file from guests and lists add, which it denies only for some arguments.
const listPolicy = `permit (principal, action, resource);
@id("guests-no-write") forbid (principal in Toolgate::Group::"guests", action, resource == Toolgate::Tool::"write_file");
@id("add-small") forbid (principal, action, resource == Toolgate::Tool::"add") unless { context.arguments has left && context.arguments.left < 1000 };
@id("anonymous-read-only") forbid (principal, action, resource) when { principal.anonymous && resource.sideEffect != "readOnly" };`

// TestPolicyToolsListHidesWhatThePrincipalMayNeverCall: tools/list's middleware drops the tools
// the set denies the request's principal whatever the arguments, keeps the others, and hides
// nothing in log-only mode or without a set.
func TestPolicyToolsListHidesWhatThePrincipalMayNeverCall(t *testing.T) {
	set, err := policy.Parse("list.cedar", []byte(listPolicy))
	require.NoError(t, err)
	infos := []toolcore.ToolInfo{
		{Name: "add", SideEffect: toolcore.ReadOnly.String()},
		{Name: "echo", SideEffect: toolcore.ReadOnly.String()},
		{Name: "write_file", SideEffect: toolcore.Unsafe.String()},
	}
	all := &sdk.ListToolsResult{Tools: []*sdk.Tool{{Name: "add"}, {Name: "echo"}, {Name: "write_file"}}}
	guest := toolcore.Principal{Issuer: "https://idp", Subject: "bob", Groups: []string{"guests"}, AuthenticatedBy: toolcore.AuthenticatedByMCP}
	staff := toolcore.Principal{Issuer: "https://idp", Subject: "alice", Groups: []string{"staff"}, AuthenticatedBy: toolcore.AuthenticatedByMCP}
	tests := []struct {
		name      string
		src       *policy.Source
		principal toolcore.Principal
		want      []string
	}{
		{name: "guest", src: policy.NewSource(set, false), principal: guest, want: []string{"add", "echo"}},
		{name: "staff", src: policy.NewSource(set, false), principal: staff, want: []string{"add", "echo", "write_file"}},
		{name: "anonymous", src: policy.NewSource(set, false), want: []string{"add", "echo"}},
		{name: "log-only hides nothing", src: policy.NewSource(set, true), principal: guest, want: []string{"add", "echo", "write_file"}},
		{name: "no set hides nothing", src: policy.NewSource(nil, false), principal: guest, want: []string{"add", "echo", "write_file"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := &policyLister{src: tt.src, infos: map[string]toolcore.ToolInfo{}}
			for _, info := range infos {
				l.infos[info.Name] = info
			}
			ctx := context.WithValue(context.Background(), callerPrincipalKey{}, tt.principal)
			next := func(context.Context, string, sdk.Request) (sdk.Result, error) { return all, nil }
			res, err := l.middleware(next)(ctx, "tools/list", &sdk.ListToolsRequest{})
			require.NoError(t, err)
			var names []string
			for _, tool := range res.(*sdk.ListToolsResult).Tools {
				names = append(names, tool.Name)
			}
			assert.Equal(t, tt.want, names)
			assert.Len(t, all.Tools, 3, "the SDK's result is left alone")
		})
	}
}

// TestPolicyToolsListThroughTheServer lists the tools of a NewServer with a policy over an
// in-memory session (the server's own principal: anonymous): write_file is hidden.
func TestPolicyToolsListThroughTheServer(t *testing.T) {
	set, err := policy.Parse("list.cedar", []byte(listPolicy))
	require.NoError(t, err)
	infos := []toolcore.ToolInfo{
		{Name: "echo", SideEffect: toolcore.ReadOnly.String(), InputSchema: []byte(`{"type":"object"}`)},
		{Name: "write_file", SideEffect: toolcore.Unsafe.String(), InputSchema: []byte(`{"type":"object"}`)},
	}
	server := NewServer(nil, infos, Options{Policy: policy.NewSource(set, false)})
	ct, st := sdk.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := server.Connect(ctx, st, nil)
	require.NoError(t, err)
	defer ss.Close()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct, nil)
	require.NoError(t, err)
	defer cs.Close()
	res, err := cs.ListTools(ctx, nil)
	require.NoError(t, err)
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	assert.Equal(t, []string{"echo"}, names)
}
