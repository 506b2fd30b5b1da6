package faults_test

import (
	"context"
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	tgclient "github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/internal/faults"
	"github.com/toolgate/toolgate/internal/testbin"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// confirmed is the answer that confirms ToolAsks's question.
var confirmed = json.RawMessage(`{"action":"accept","content":{"confirm":true}}`)

// TestInputAnsweredAcrossWorkerKill: the Unsafe ToolAsks commits and checkpoints its effect, then
// asks "proceed?" and the call waits; its worker is SIGKILLed during the wait and a replacement
// started. Answered through the Go client's Options.OnInput hook, through `toolgate answer`, and
// through `toolgate call --prompt always` reading piped stdin, each call completes with the
// answer (read by the attempt that runs after the question), and the effect before the question
// happened exactly once: two runs, one effect in the ledger.
func TestInputAnsweredAcrossWorkerKill(t *testing.T) {
	dev := sharedDev(t)

	t.Run("client hook", func(t *testing.T) {
		f := newFixture(t, dev)
		doomed := f.startWorker(t, false)
		sdk := sdkClient(t, dev)
		offered, replaced := make(chan tgclient.InputEvent, 1), make(chan struct{})
		cl := tgclient.New(sdk, tgclient.Options{TaskQueue: f.queue, InputInterval: 100 * time.Millisecond,
			OnInput: func(ctx context.Context, ev tgclient.InputEvent) (map[string]json.RawMessage, error) {
				offered <- ev
				select {
				case <-replaced:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
				return map[string]json.RawMessage{faults.AskKey: confirmed}, nil
			}})
		c := call(t, "ask-hook", faults.ToolAsks, faults.Args{})
		ctx, cancel := context.WithTimeout(context.Background(), outcomeTimeout)
		defer cancel()
		type outcome struct {
			res toolcore.Result
			err error
		}
		done := make(chan outcome, 1)
		go func() {
			res, err := cl.Execute(ctx, c)
			done <- outcome{res, err}
		}()
		var ev tgclient.InputEvent
		select {
		case ev = <-offered:
		case <-ctx.Done():
			require.FailNow(t, "the hook was never offered the question")
		}
		assert.Equal(t, 1, ev.Round)
		assert.Equal(t, faults.ToolAsks, ev.ToolName)
		require.Contains(t, ev.Requests, faults.AskKey)
		assert.Equal(t, toolcore.MethodElicit, ev.Requests[faults.AskKey].Method)
		assert.Empty(t, ev.Callbacks)
		assert.Equal(t, 1, f.watch.snapshotTally(t).Of(c.ID(), faults.KindEffect), "the effect before the question")
		doomed.kill(t)
		f.startWorker(t, false)
		close(replaced)
		o := <-done
		require.NoError(t, o.err)
		assertProceeded(t, f, c, o.res)
	})

	t.Run("toolgate answer", func(t *testing.T) {
		f := newFixture(t, dev)
		toolgate, _ := built(t)
		doomed := f.startWorker(t, false)
		cl, _ := f.client(t)
		c := call(t, "ask-answer", faults.ToolAsks, faults.Args{})
		ctx, cancel := context.WithTimeout(context.Background(), outcomeTimeout)
		defer cancel()
		// A call whose stdin is no terminal does not prompt: it prints the question and how to
		// answer it on stderr (no terminal either), and waits.
		wid := "toolcall-" + c.ID()
		caller := start(t, "toolgate call", toolgate, "call", "--address", dev.frontend, "--task-queue", f.queue,
			"--id", c.ID(), faults.ToolAsks, "{}")
		notice := waitStderr(t, caller, "toolgate answer "+wid+" proceed=accept")
		assert.Contains(t, notice, "toolgate: effect_asks asks for input (round 1) until ")
		assert.Contains(t, notice, `  proceed: elicitation/create "Delete 3 resources?\x1b]8;;http://evil\x1b\\ now\nreally", fields confirm (boolean)`)
		assert.NotContains(t, notice, "\x1b]", "escaped")
		st := awaitInput(ctx, t, cl, c.ID())
		assert.Equal(t, 1, st.Round)

		status := start(t, "toolgate status", toolgate, "status", "--address", dev.frontend, wid)
		require.Equal(t, 0, status.waitExit(t, outcomeTimeout), status.stderrText())
		out := strings.Join(status.stdoutLines(), "\n")
		assert.Regexp(t, `(?m)^input     awaiting input \(round 1\) since \S+Z until \S+Z$`, out)
		assert.Contains(t, out, `question  proceed: elicitation/create "Delete 3 resources?\x1b]8;;http://evil\x1b\\ now\nreally", fields confirm (boolean)`)
		assert.Contains(t, out, "answer    toolgate answer "+wid+" proceed=accept")
		assert.NotContains(t, out, "\x1b", "escaped")

		doomed.kill(t)
		f.startWorker(t, false)

		// Refusals say why: an answer for another round (the call's validator), a key the round
		// does not ask (the command, before sending).
		_, err := cl.AnswerInput(ctx, c.ID(), wire.InputAnswer{Round: 7, Responses: map[string]json.RawMessage{faults.AskKey: confirmed}})
		require.ErrorIs(t, err, tgclient.ErrInputRefused)
		assert.ErrorContains(t, err, "the answer is for round 7, the call waits in round 1")
		wrong := start(t, "toolgate answer", toolgate, "answer", "--address", dev.frontend, wid, "nope=decline")
		assert.Equal(t, 2, wrong.waitExit(t, outcomeTimeout))
		assert.Contains(t, wrong.stderrAll(), `round 1 asks no question nope (it asks proceed)`)

		answer := start(t, "toolgate answer", toolgate, "answer", "--address", dev.frontend, wid,
			faults.AskKey+"=accept", "--field", "confirm=y", "--by", "ops")
		require.Equal(t, 0, answer.waitExit(t, outcomeTimeout), answer.stderrText())
		assert.Contains(t, answer.stdoutLines(), "answered  proceed (round 1) by ops; the tool runs again with the answers")

		res, err := cl.Result(ctx, c.ID())
		require.NoError(t, err)
		assertProceeded(t, f, c, res)
		require.Equal(t, 0, caller.waitExit(t, outcomeTimeout), caller.stderrText())
		assert.Contains(t, strings.Join(caller.stdoutLines(), "\n"), `"toolCallId":"ask-answer"`, "the waiting call prints the result")
		_, err = cl.AnswerInput(ctx, c.ID(), wire.InputAnswer{Responses: map[string]json.RawMessage{faults.AskKey: confirmed}})
		assert.ErrorIs(t, err, tgclient.ErrNotAwaitingInput, "a closed call waits for nothing")
	})

	t.Run("toolgate call prompts", func(t *testing.T) {
		f := newFixture(t, dev)
		toolgate, _ := built(t)
		doomed := f.startWorker(t, false)
		c := call(t, "ask-call", faults.ToolAsks, faults.Args{})
		cmd := exec.Command(toolgate, "call", "--address", dev.frontend, "--task-queue", f.queue, "--id", c.ID(),
			"--prompt", "always", "--progress", "off", faults.ToolAsks, "{}")
		cmd.Env = childEnv()
		dieWithParent(cmd)
		stdin, err := cmd.StdinPipe()
		require.NoError(t, err)
		var stdout, stderr testbin.SyncBuffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		require.NoError(t, cmd.Start())
		exited := make(chan struct{})
		var waitErr error
		go func() {
			waitErr = cmd.Wait()
			close(exited)
		}()
		t.Cleanup(func() {
			_ = cmd.Process.Kill()
			<-exited
		})
		prompt := waitText(t, &stderr, "accept, decline or cancel? [a/d/c]: ")
		assert.Contains(t, prompt, `proceed: Delete 3 resources?\u001b]8;;http://evil\u001b\ now\u000areally`)
		assert.NotContains(t, prompt, "\x1b", "escaped")

		doomed.kill(t)
		f.startWorker(t, false)
		_, err = io.WriteString(stdin, "a\n")
		require.NoError(t, err)
		waitText(t, &stderr, "proceed.confirm (boolean, required) Confirm Proceed? [y/n]: ")
		_, err = io.WriteString(stdin, "maybe\ny\n")
		require.NoError(t, err)
		select {
		case <-exited:
			require.NoError(t, waitErr, "stderr:\n%s", stderr.String())
		case <-time.After(outcomeTimeout):
			require.FailNow(t, "toolgate call did not exit", stderr.String())
		}
		assert.Contains(t, stderr.String(), "proceed.confirm: answer y or n", "a malformed value is asked again")
		var res toolcore.Result
		require.NoError(t, json.Unmarshal([]byte(strings.TrimSpace(stdout.String())), &res), stdout.String())
		assertProceeded(t, f, c, res)
	})
}

// assertProceeded checks that res is ToolAsks's confirmed result, read by a later attempt than
// the one that asked, and that the ledger holds two runs and one effect for c.
func assertProceeded(t *testing.T, f *fixture, c toolcore.ToolCall, res toolcore.Result) {
	t.Helper()
	require.True(t, linked(res, c), "%+v", res)
	require.False(t, res.IsError(), res.Content())
	var out faults.AskedOutput
	require.NoError(t, json.Unmarshal([]byte(res.Content()), &out))
	assert.True(t, out.Proceed, res.Content())
	tally := f.watch.snapshotTally(t)
	assert.Equal(t, 1, tally.Of(c.ID(), faults.KindEffect), "the effect before the question happened once")
	assert.Equal(t, 2, tally.Of(c.ID(), faults.KindRun), "one run asked, one ran with the answer")
}

// snapshotTally counts the ledger's records so far.
func (w *ledgerWatch) snapshotTally(t *testing.T) faults.Tally {
	return faults.Count(w.snapshot(t))
}

// awaitInput polls the input query until the call waits for answers.
func awaitInput(ctx context.Context, t *testing.T, cl *tgclient.Client, callID string) wire.InputState {
	t.Helper()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		st, err := cl.Input(ctx, callID)
		if err == nil && st.Waiting {
			return st
		}
		select {
		case <-ctx.Done():
			require.FailNow(t, "the call never waited for input", "%s: %v", callID, err)
		case <-tick.C:
		}
	}
}

// waitStderr polls p's stderr until it contains substr and returns it whole; it fails after
// readyTimeout or when p exits first.
func waitStderr(t *testing.T, p *proc, substr string) string {
	t.Helper()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(readyTimeout)
	for {
		if s := p.stderrAll(); strings.Contains(s, substr) {
			return s
		}
		select {
		case <-tick.C:
		case <-p.exited:
			require.FailNow(t, p.name+" exited before printing "+substr, p.stderrAll())
		case <-deadline:
			require.FailNow(t, "no "+substr, p.stderrAll())
		}
	}
}

// waitText polls buf until it contains substr and returns it whole; it fails after lineTimeout.
func waitText(t *testing.T, buf *testbin.SyncBuffer, substr string) string {
	t.Helper()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(readyTimeout)
	for {
		if s := buf.String(); strings.Contains(s, substr) {
			return s
		}
		select {
		case <-tick.C:
		case <-deadline:
			require.FailNow(t, "no "+substr, buf.String())
		}
	}
}
