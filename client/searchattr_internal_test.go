package client

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/mocks"
	"google.golang.org/grpc"

	"github.com/toolgate/toolgate/internal/searchattr"
)

// flakyOperator answers ListSearchAttributes with its errs in turn, then with every toolgate
// attribute.
type flakyOperator struct {
	operatorservice.OperatorServiceClient
	errs  []error
	calls int
}

func (f *flakyOperator) ListSearchAttributes(context.Context, *operatorservice.ListSearchAttributesRequest, ...grpc.CallOption) (*operatorservice.ListSearchAttributesResponse, error) {
	f.calls++
	if len(f.errs) > 0 {
		err := f.errs[0]
		f.errs = f.errs[1:]
		return nil, err
	}
	return &operatorservice.ListSearchAttributesResponse{CustomAttributes: searchattr.Definitions()}, nil
}

// TestDetectAttributesAfterATransientFailure: a detection the server could not answer (its
// database restarting) is not cached, so the next start sets ToolName and ToolCallId again; one it
// refused (no permission) is, and starts go without them. Before, the calls started after a
// PostgreSQL restart all went without the attributes for the client's life.
func TestDetectAttributesAfterATransientFailure(t *testing.T) {
	tests := []struct {
		name       string
		err        error
		wantSecond bool
		wantCalls  int
	}{
		{name: "unavailable", err: serviceerror.NewUnavailable("database restarting"), wantSecond: true, wantCalls: 2},
		{name: "internal", err: serviceerror.NewInternal("sql: connection refused"), wantSecond: true, wantCalls: 2},
		{name: "permission denied", err: serviceerror.NewPermissionDenied("no operator role", ""), wantSecond: false, wantCalls: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			op := &flakyOperator{errs: []error{tt.err}}
			sdk := mocks.NewClient(t)
			sdk.On("OperatorService").Return(op)
			c := New(sdk, Options{})
			set, _, _ := c.detectAttributes(t.Context())
			assert.False(t, set, "the failed detection's start goes without the attributes")
			set, principal, subject := c.detectAttributes(t.Context())
			assert.Equal(t, tt.wantSecond, set)
			assert.Equal(t, tt.wantSecond, principal)
			assert.Equal(t, tt.wantSecond, subject)
			c.detectAttributes(t.Context())
			assert.Equal(t, tt.wantCalls, op.calls, "detected again only after a transient failure, then cached")
		})
	}
}
