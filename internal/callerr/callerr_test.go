package callerr

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/temporal"

	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

func TestMapSentinels(t *testing.T) {
	wrap := func(cause error) error { return fmt.Errorf("workflow execution error: %w", cause) }
	tests := []struct {
		name string
		give error
		want error
	}{
		{name: "canceled", give: wrap(temporal.NewCanceledError()), want: wire.ErrCallCanceled},
		{name: "terminated", give: wrap(&temporal.TerminatedError{}), want: wire.ErrCallTerminated},
		{name: "timed out", give: wrap(temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_START_TO_CLOSE, nil)), want: wire.ErrCallTimedOut},
		{name: "not found", give: serviceerror.NewNotFound("workflow not found"), want: wire.ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.ErrorIs(t, Map("toolcall-c", tt.give), tt.want)
		})
	}
}

func TestMapNonRecoverableIsGenuine(t *testing.T) {
	give := fmt.Errorf("workflow execution error: %w",
		temporal.NewNonRetryableApplicationError("ledger invariant broken", wire.ErrTypeNonRecoverable, nil))
	err := Map("toolcall-c", give)
	fatal, ok := toolcore.AsNonRecoverable(err)
	require.True(t, ok, "want a genuine NonRecoverableToolError, got %v", err)
	assert.Equal(t, "ledger invariant broken", fatal.Error())
}

func TestMapInvalidToolCall(t *testing.T) {
	give := fmt.Errorf("workflow execution error: %w",
		temporal.NewNonRetryableApplicationError("type must be \"toolCall\"", wire.ErrTypeInvalidToolCall, nil))
	var ce *toolcore.ContractError
	require.ErrorAs(t, Map("toolcall-c", give), &ce)
	assert.Equal(t, toolcore.CodeInvalidToolCall, ce.Code)
	assert.Equal(t, "type must be \"toolCall\"", ce.Message)
}

func TestMapLookAlikeIsNotFatal(t *testing.T) {
	// Another ApplicationError type (even with the same message) is a plain failure.
	give := fmt.Errorf("workflow execution error: %w",
		temporal.NewApplicationError("boom", "SomethingElse"))
	err := Map("toolcall-c", give)
	_, fatal := toolcore.AsNonRecoverable(err)
	assert.False(t, fatal)
	assert.ErrorContains(t, err, "boom")
}

// AwaitToolCall (a parent workflow attaching to an existing call) reports the same outcomes as
// ApplicationError types; they map to the same sentinels.
func TestMapAwaitToolCallTypes(t *testing.T) {
	tests := []struct {
		typ  string
		want error
	}{
		{typ: wire.ErrTypeCallCanceled, want: wire.ErrCallCanceled},
		{typ: wire.ErrTypeCallTerminated, want: wire.ErrCallTerminated},
		{typ: wire.ErrTypeCallTimedOut, want: wire.ErrCallTimedOut},
		{typ: wire.ErrTypeCallNotFound, want: wire.ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.typ, func(t *testing.T) {
			err := Map("toolcall-c", temporal.NewNonRetryableApplicationError("x", tt.typ, nil))
			assert.ErrorIs(t, err, tt.want)
			assert.ErrorContains(t, err, "toolcall-c")
		})
	}
	conflict := Map("toolcall-c", temporal.NewNonRetryableApplicationError(
		wire.ErrCallConflict.Error()+": toolcall-c: arguments differ", wire.ErrTypeCallConflict, nil))
	assert.ErrorIs(t, conflict, wire.ErrCallConflict)
	assert.Equal(t, wire.ErrCallConflict.Error()+": toolcall-c: arguments differ", conflict.Error())
}
