package toolbox

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/toolcore"
)

// newTestRegistry is New(cfg) that fails the test on error. Unless cfg has a resolver, names
// resolve nowhere: tests never use real DNS.
func newTestRegistry(t *testing.T, cfg Config) *toolcore.Registry {
	t.Helper()
	if cfg.Resolver == nil {
		cfg.Resolver = fakeResolver{}
	}
	reg, err := New(cfg)
	require.NoError(t, err)
	return reg
}

// run executes one call in process and returns its result.
func run(t *testing.T, reg *toolcore.Registry, name, args string) toolcore.Result {
	t.Helper()
	return runCtx(t, context.Background(), reg, name, args, toolcore.ExecuteOptions{})
}

func runCtx(t *testing.T, ctx context.Context, reg *toolcore.Registry, name, args string, opts toolcore.ExecuteOptions) toolcore.Result {
	t.Helper()
	call, err := toolcore.NewToolCall("call-"+name, name, []byte(args))
	require.NoError(t, err)
	res, err := toolcore.ExecuteWith(ctx, reg, call, opts)
	require.NoError(t, err)
	require.False(t, res.IsZero())
	return res
}

// errorBody is the content of an error result.
type errorBody struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// requireError asserts res is an error result with code and returns its message.
func requireError(t *testing.T, res toolcore.Result, code toolcore.ErrorCode) string {
	t.Helper()
	require.True(t, res.IsError(), "want %s, got success %s", code, res.Content())
	var body errorBody
	require.NoError(t, json.Unmarshal([]byte(res.Content()), &body), res.Content())
	require.Equal(t, code.String(), body.Error.Code, res.Content())
	return body.Error.Message
}

// requireOK asserts res is a success, not truncated by the serializer, and decodes its content.
func requireOK(t *testing.T, res toolcore.Result, into any) {
	t.Helper()
	require.False(t, res.IsError(), res.Content())
	assert.NotContains(t, res.Content(), toolcore.TruncationMarker)
	dec := json.NewDecoder(strings.NewReader(res.Content()))
	dec.UseNumber()
	require.NoError(t, dec.Decode(into), res.Content())
}

// assertRejects runs a table of argument strings against a tool and checks the exact reasons.
type rejectCase struct {
	name string
	give string
	want string
}

func assertRejects(t *testing.T, reg *toolcore.Registry, tool string, tests []rejectCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := run(t, reg, tool, tt.give)
			assert.Equal(t, tt.want, requireError(t, res, toolcore.CodeToolArgumentsInvalid))
		})
	}
}

// fakeResolver resolves names from a map; other names fail, so tests never use real DNS.
type fakeResolver map[string][]netip.Addr

func (r fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if ips, ok := r[host]; ok {
		return ips, nil
	}
	return nil, fmt.Errorf("lookup %s: no such host", host)
}
