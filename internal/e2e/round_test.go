package e2e

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/toolcore"
)

// journal records the start and end of every run of its tools, in the order they happen.
type journal struct {
	mu      sync.Mutex
	entries []string
}

func (j *journal) add(entry string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.entries = append(j.entries, entry)
}

func (j *journal) snapshot() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return slices.Clone(j.entries)
}

func (j *journal) index(entry string) int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return slices.Index(j.entries, entry)
}

// tool defines a tool that journals "start <tag>" and "end <tag>" and returns its tag.
func (j *journal) tool(t *testing.T, name string, opts toolcore.Options) toolcore.Tool {
	return define(t, name, opts, func(_ context.Context, a args) (any, error) {
		j.add("start " + a.Tag)
		defer j.add("end " + a.Tag)
		return map[string]string{"tag": a.Tag}, nil
	})
}

func tagged(t *testing.T, id, name string) toolcore.ToolCall {
	return call(t, id, name, fmt.Sprintf(`{"tag":%q}`, id))
}

func TestExecuteRoundRunsInParallelAndAnswersInSourceOrder(t *testing.T) {
	g := newGate()
	e := newEnv(t, g.tool(t, "slow", toolcore.Options{}, false))
	ctx := e.ctx()
	var calls []toolcore.ToolCall
	for i := range 8 {
		calls = append(calls, tagged(t, fmt.Sprintf("p%d", i), "slow"))
	}
	type round struct {
		outcomes []toolcore.Outcome
		err      error
	}
	done := make(chan round, 1)
	go func() {
		o, err := e.client.ExecuteRound(ctx, calls, toolcore.RoundOptions{})
		done <- round{o, err}
	}()
	for range calls {
		g.waitStarted(t) // all eight run at once: none is released before all have started
	}
	close(g.release)
	got := <-done
	require.NoError(t, got.err)
	require.Len(t, got.outcomes, len(calls))
	for i, o := range got.outcomes {
		assert.Equal(t, i, o.Index)
		assert.Equal(t, calls[i].ID(), o.CallID)
		assert.Equal(t, "slow", o.ToolName)
		require.Equal(t, toolcore.OutcomeResult, o.Kind, "call %d: %v", i, o.Err)
		assert.Equal(t, calls[i].ID(), o.Result.ToolCallID())
		assert.Equal(t, fmt.Sprintf(`{"attempt":1,"tag":%q}`, calls[i].ID()), o.Result.Content())
	}
}

func TestExecuteRoundSequentialToolRunsAlone(t *testing.T) {
	var j journal
	e := newEnv(t, j.tool(t, "read", toolcore.Options{SideEffect: toolcore.ReadOnly}), j.tool(t, "write", toolcore.Options{Sequential: true}))
	reg, err := toolcore.NewRegistry(j.tool(t, "read", toolcore.Options{}), j.tool(t, "write", toolcore.Options{Sequential: true}))
	require.NoError(t, err)
	calls := []toolcore.ToolCall{tagged(t, "r1", "read"), tagged(t, "r2", "read"), tagged(t, "w3", "write"), tagged(t, "r4", "read")}

	outcomes, err := e.client.ExecuteRound(e.ctx(), calls, toolcore.RoundOptions{Tools: reg})
	require.NoError(t, err)
	for i, o := range outcomes {
		require.Equal(t, toolcore.OutcomeResult, o.Kind, "call %d: %v", i, o.Err)
		assert.Equal(t, calls[i].ID(), o.Result.ToolCallID())
	}
	assert.Less(t, j.index("end r1"), j.index("start w3"), "calls before a sequential call end before it starts")
	assert.Less(t, j.index("end r2"), j.index("start w3"))
	assert.Less(t, j.index("end w3"), j.index("start r4"), "calls after it start after it ends")
}

func TestExecuteRoundSequentialOption(t *testing.T) {
	var j journal
	e := newEnv(t, j.tool(t, "read", toolcore.Options{SideEffect: toolcore.ReadOnly}))
	calls := []toolcore.ToolCall{tagged(t, "s1", "read"), tagged(t, "s2", "read"), tagged(t, "s3", "read")}

	outcomes, err := e.client.ExecuteRound(e.ctx(), calls, toolcore.RoundOptions{Sequential: true})
	require.NoError(t, err)
	require.Len(t, outcomes, 3)
	assert.Equal(t, []string{"start s1", "end s1", "start s2", "end s2", "start s3", "end s3"}, j.snapshot())
}

func TestExecuteRoundFatalStopsLaterCallsAndKeepsRunningOnes(t *testing.T) {
	g := newGate()
	var writes atomic.Int32
	fatalStarted := make(chan struct{}, 1)
	fatal := define(t, "fatal", toolcore.Options{}, func(context.Context, args) (any, error) {
		fatalStarted <- struct{}{}
		return nil, toolcore.NewNonRecoverableToolError("credentials revoked")
	})
	write := define(t, "write", toolcore.Options{Sequential: true}, func(context.Context, args) (any, error) {
		writes.Add(1)
		return "written", nil
	})
	e := newEnv(t, g.tool(t, "slow", toolcore.Options{}, false), fatal, write)
	reg, err := toolcore.NewRegistry(write)
	require.NoError(t, err)
	calls := []toolcore.ToolCall{tagged(t, "f1", "fatal"), tagged(t, "s2", "slow"), tagged(t, "w3", "write"), {}}

	type round struct {
		outcomes []toolcore.Outcome
		err      error
	}
	done := make(chan round, 1)
	go func() {
		o, err := e.client.ExecuteRound(e.ctx(), calls, toolcore.RoundOptions{Tools: reg})
		done <- round{o, err}
	}()
	<-fatalStarted
	// The fatal call ends while s2 runs; s2 is left to finish and its result kept.
	g.waitStarted(t)
	ctx := e.ctx()
	require.Eventually(t, func() bool {
		st, err := e.client.Status(ctx, "f1")
		return err == nil && st.State == client.Failed
	}, testTimeout, 20*time.Millisecond, "the fatal call closes while s2 runs")
	close(g.release)
	got := <-done

	got0, ok := toolcore.AsNonRecoverable(got.err)
	require.True(t, ok, "the round returns the fatal error: %v", got.err)
	assert.Equal(t, "credentials revoked", got0.Error())
	require.Len(t, got.outcomes, 4)
	assert.Equal(t, toolcore.OutcomeFatal, got.outcomes[0].Kind)
	assert.Equal(t, toolcore.OutcomeResult, got.outcomes[1].Kind, "running call finished: %v", got.outcomes[1].Err)
	assert.Equal(t, "s2", got.outcomes[1].Result.ToolCallID())
	assert.Equal(t, toolcore.OutcomeNotStarted, got.outcomes[2].Kind)
	assert.ErrorIs(t, got.outcomes[2].Err, toolcore.ErrRoundStopped)
	assert.Equal(t, toolcore.OutcomeContractError, got.outcomes[3].Kind, "the zero call is invalid, whatever else happens")
	assert.Equal(t, int32(0), writes.Load(), "the call after the fatal one never ran")
}

func TestExecuteRoundCanceledContext(t *testing.T) {
	g := newGate()
	var writes atomic.Int32
	write := define(t, "write", toolcore.Options{Sequential: true}, func(context.Context, args) (any, error) {
		writes.Add(1)
		return "written", nil
	})
	e := newEnv(t, g.tool(t, "slow", toolcore.Options{}, false), write)
	reg, err := toolcore.NewRegistry(write)
	require.NoError(t, err)
	calls := []toolcore.ToolCall{tagged(t, "c1", "slow"), tagged(t, "c2", "slow"), tagged(t, "c3", "write")}

	ctx, cancel := context.WithCancel(e.ctx())
	type round struct {
		outcomes []toolcore.Outcome
		err      error
	}
	done := make(chan round, 1)
	go func() {
		o, err := e.client.ExecuteRound(ctx, calls, toolcore.RoundOptions{Tools: reg})
		done <- round{o, err}
	}()
	g.waitStarted(t)
	g.waitStarted(t)
	cancel()
	got := <-done

	require.ErrorIs(t, got.err, context.Canceled)
	for i := range 2 {
		assert.Equal(t, toolcore.OutcomeCanceled, got.outcomes[i].Kind, "call %d: %v", i, got.outcomes[i].Err)
		assert.Error(t, <-g.canceled, "the running tools were stopped")
	}
	assert.Equal(t, toolcore.OutcomeNotStarted, got.outcomes[2].Kind)
	assert.Equal(t, int32(0), writes.Load())
}
