package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	tgclient "github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

func TestRenderProgress(t *testing.T) {
	tests := []struct {
		name string
		give toolcore.Progress
		want string
	}{
		{
			name: "start",
			give: toolcore.Progress{Completed: 0, Total: 600, Message: "slept 0 of 600 seconds"},
			want: "[..............................]   0% 0/600 slept 0 of 600 seconds",
		},
		{
			name: "half",
			give: toolcore.Progress{Completed: 5, Total: 10},
			want: "[###############...............]  50% 5/10",
		},
		{
			name: "done",
			give: toolcore.Progress{Completed: 10, Total: 10},
			want: "[##############################] 100% 10/10",
		},
		{
			name: "beyond the total is clamped",
			give: toolcore.Progress{Completed: 12, Total: 10},
			want: "[##############################] 100% 12/10",
		},
		{
			name: "unknown total",
			give: toolcore.Progress{Completed: 7, Message: "pages"},
			want: "[~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~] 7 pages",
		},
		{
			name: "message keeps its first line",
			give: toolcore.Progress{Completed: 1, Total: 2, Message: "one\ntwo"},
			want: "[###############...............]  50% 1/2 one",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, renderProgress(tt.give))
		})
	}
}

func TestOneLineBoundsRunes(t *testing.T) {
	got := oneLine(strings.Repeat("é", 100), 10)
	assert.Equal(t, strings.Repeat("é", 9)+"…", got)
}

func TestResolveProgressMode(t *testing.T) {
	tests := []struct {
		give    progressMode
		want    progressMode
		wantErr bool
	}{
		{give: progressAuto, want: progressOff}, // a buffer is no terminal
		{give: progressBar, want: progressBar},
		{give: progressPlain, want: progressPlain},
		{give: progressOff, want: progressOff},
		{give: "sideways", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(string(tt.give), func(t *testing.T) {
			got, err := resolveProgressMode(tt.give, &bytes.Buffer{})
			assert.Equal(t, tt.wantErr, err != nil)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestProgressViewShowsChangesOnce(t *testing.T) {
	reports := []toolcore.Progress{
		{Completed: 1, Total: 3},
		{Completed: 1, Total: 3}, // unchanged: not shown again
		{Completed: 2, Total: 3},
	}
	var out bytes.Buffer
	show := (&progressView{w: &out, mode: progressPlain}).hook()
	for _, p := range reports {
		show(tgclient.ProgressEvent{Progress: p})
	}
	want := fmt.Sprintf("progress %s\nprogress %s\n", renderProgress(reports[0]), renderProgress(reports[2]))
	assert.Equal(t, want, out.String())
}

// After a result the bar's last frame stays on its line (finish); after anything else it is
// erased (clear).
func TestProgressViewBarFinishedOrCleared(t *testing.T) {
	p := toolcore.Progress{Completed: 3, Total: 3}
	bar := "\r\x1b[K" + renderProgress(p)
	for _, tt := range []struct {
		name string
		end  func(*progressView)
		want string
	}{
		{name: "finish", end: (*progressView).finish, want: bar + "\n"},
		{name: "clear", end: (*progressView).clear, want: bar + "\r\x1b[K"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			v := &progressView{w: &out, mode: progressBar}
			v.hook()(tgclient.ProgressEvent{Progress: p})
			tt.end(v)
			tt.end(v) // once only
			assert.Equal(t, tt.want, out.String())
		})
	}
}

// A line printed beside the progress gets a line of its own; a drawn bar is redrawn below it.
func TestProgressViewPrintln(t *testing.T) {
	p := toolcore.Progress{Completed: 1, Total: 2}
	bar := "\r\x1b[K" + renderProgress(p)
	tests := []struct {
		mode progressMode
		want string
	}{
		{mode: progressBar, want: bar + "\r\x1b[Knote\n" + bar},
		{mode: progressPlain, want: "progress " + renderProgress(p) + "\nnote\n"},
		{mode: progressOff, want: "note\n"},
	}
	for _, tt := range tests {
		t.Run(string(tt.mode), func(t *testing.T) {
			var out bytes.Buffer
			v := &progressView{w: &out, mode: tt.mode}
			v.show(p)
			v.println("note")
			assert.Equal(t, tt.want, out.String())
		})
	}
}

func TestProgressOffReadsNothing(t *testing.T) {
	assert.Nil(t, (&progressView{mode: progressOff}).hook(), "no OnProgress: Execute reads no progress")
}

func TestClassify(t *testing.T) {
	tests := []struct {
		name     string
		give     error
		wantCode int
		wantMsg  string
	}{
		{name: "error result already printed", give: &exitError{code: ExitErrorResult}, wantCode: ExitErrorResult},
		{name: "bad input", give: badInput(errors.New("x")), wantCode: ExitUsage, wantMsg: "bad input"},
		{name: "fatal tool error", give: fmt.Errorf("run: %w", toolcore.NewNonRecoverableToolError("disk on fire")), wantCode: ExitFatal, wantMsg: "fatal tool error: stop the agent run"},
		{name: "canceled by someone", give: fmt.Errorf("toolcall-a: %w", wire.ErrCallCanceled), wantCode: ExitCanceled, wantMsg: "call canceled"},
		{name: "canceled by ctrl-c", give: aboutCall(callIDs{ToolCallID: "a"}, context.Canceled), wantCode: ExitCanceled, wantMsg: "call canceled"},
		{name: "not found", give: fmt.Errorf("get: %w", wire.ErrNotFound), wantCode: ExitUsage, wantMsg: "bad input"},
		{name: "conflict", give: fmt.Errorf("start: %w", wire.ErrCallConflict), wantCode: ExitUsage, wantMsg: "bad input"},
		{name: "contract error", give: &toolcore.ContractError{Code: toolcore.CodeInvalidToolCall, Message: "x"}, wantCode: ExitUsage, wantMsg: "bad input"},
		{name: "terminated", give: fmt.Errorf("x: %w", wire.ErrCallTerminated), wantCode: ExitFailure, wantMsg: "command failed"},
		{name: "anything else", give: errors.New("connection refused"), wantCode: ExitFailure, wantMsg: "command failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, msg := classify(tt.give)
			assert.Equal(t, tt.wantCode, code)
			assert.Equal(t, tt.wantMsg, msg)
		})
	}
}

func TestCallErrorFields(t *testing.T) {
	err := fmt.Errorf("outer: %w", aboutCall(callIDs{WorkflowID: "toolcall-a", ToolCallID: "a", ToolName: "add"}, errors.New("boom")))
	keys := func(withError bool) []string {
		var keys []string
		for _, f := range errorFields(err, withError) {
			keys = append(keys, f.Key)
		}
		return keys
	}
	assert.Equal(t, []string{"error", "toolCallId", "toolName", "workflowId"}, keys(true))
	assert.Equal(t, []string{"toolCallId", "toolName", "workflowId"}, keys(false))
	assert.Nil(t, aboutCall(callIDs{}, nil))
}

func TestToolCallFromArguments(t *testing.T) {
	tests := []struct {
		name     string
		give     callOptions
		args     []string
		stdin    string
		wantID   string
		wantName string
		wantArgs string
	}{
		{name: "name and arguments", give: callOptions{id: "c1"}, args: []string{"add", `{"right":2, "left":1}`}, wantID: "c1", wantName: "add", wantArgs: `{"left":1,"right":2}`},
		{name: "name only", give: callOptions{id: "c2"}, args: []string{"echo"}, wantID: "c2", wantName: "echo", wantArgs: `{}`},
		{name: "whole call on stdin", stdin: `{"type":"toolCall","id":"s1","name":"add","arguments":{"left":1,"right":2}}`, wantID: "s1", wantName: "add", wantArgs: `{"left":1,"right":2}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			call, err := tt.give.toolCall(tt.args, strings.NewReader(tt.stdin))
			require.NoError(t, err)
			assert.Equal(t, tt.wantID, call.ID())
			assert.Equal(t, tt.wantName, call.Name())
			assert.Equal(t, tt.wantArgs, string(call.Arguments().Raw()))
		})
	}
}

func TestGeneratedCallIDs(t *testing.T) {
	a, err := callOptions{}.toolCall([]string{"add"}, strings.NewReader(""))
	require.NoError(t, err)
	b, err := callOptions{}.toolCall([]string{"add"}, strings.NewReader(""))
	require.NoError(t, err)
	assert.Regexp(t, `^cli-[0-9a-f]{16}$`, a.ID())
	assert.NotEqual(t, a.ID(), b.ID())
}
