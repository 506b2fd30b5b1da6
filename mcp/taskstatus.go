package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/wire"
)

// Task status notifications (MCP 2025-11-25's notifications/tasks/status, params the Task). A
// server session of go-sdk v1.8.0 sends only the SDK's own notification kinds (its sending
// handler refuses any other method), so a status goes out through the SDK as a
// notifications/progress whose _meta carries the task under taskStatusMeta, and toolgate's
// transports rewrite that message into notifications/tasks/status on its way out: Transport's
// connection for stdio, taskStatusStream for the SSE streams of streamable HTTP (live and
// replayed from the event store alike). The SDK keeps ordering and serializing the writes.

// MethodTaskStatus is the notification of a task's status.
const MethodTaskStatus = "notifications/tasks/status"

// taskStatusMeta marks a notifications/progress that is a task status in disguise. Only
// notifyTaskStatus sets _meta on a progress notification: a tool's reports and a client's
// progress token cannot put it there.
const taskStatusMeta = "io.toolgate/taskStatus"

// taskStatusRetry is the pause before waiting again on a call whose wait failed while it runs
// (Temporal unavailable for a moment).
const taskStatusRetry = time.Second

var taskStatusMark = []byte(taskStatusMeta)

// notifyTaskStatus sends task as notifications/tasks/status on ss (over streamable HTTP, on the
// client's standalone SSE stream: ctx carries no request).
func notifyTaskStatus(ctx context.Context, ss *sdk.ServerSession, task Task) error {
	return ss.NotifyProgress(ctx, &sdk.ProgressNotificationParams{
		Meta:          sdk.Meta{taskStatusMeta: task},
		ProgressToken: taskStatusMeta, // never reaches the client
	})
}

// asTaskStatus returns msg rewritten into notifications/tasks/status when it is a progress
// notification notifyTaskStatus made, else msg itself.
func asTaskStatus(msg jsonrpc.Message) jsonrpc.Message {
	req, ok := msg.(*jsonrpc.Request)
	if !ok || req.IsCall() || req.Method != "notifications/progress" || !bytes.Contains(req.Params, taskStatusMark) {
		return msg
	}
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(req.Params, &p) != nil {
		return msg
	}
	task, ok := p.Meta[taskStatusMeta]
	if !ok {
		return msg
	}
	return &jsonrpc.Request{Method: MethodTaskStatus, Params: task}
}

// taskStatusStream returns w for the response to r, rewriting task statuses in the SSE events of
// a GET (the standalone stream, or a resumed one replaying the event store). The SDK writes each
// event with one Write (event, id, data lines); one without the mark passes untouched.
func taskStatusStream(w http.ResponseWriter, r *http.Request) http.ResponseWriter {
	if r.Method != http.MethodGet {
		return w
	}
	return &taskStatusWriter{w}
}

type taskStatusWriter struct{ http.ResponseWriter }

func (w *taskStatusWriter) Write(event []byte) (int, error) {
	if !bytes.Contains(event, taskStatusMark) {
		return w.ResponseWriter.Write(event)
	}
	if _, err := w.ResponseWriter.Write(rewriteSSEEvent(event)); err != nil {
		return 0, err
	}
	return len(event), nil
}

func (w *taskStatusWriter) Flush() { _ = http.NewResponseController(w.ResponseWriter).Flush() }

func (w *taskStatusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// rewriteSSEEvent applies asTaskStatus to the message in each data line of an SSE event.
func rewriteSSEEvent(event []byte) []byte {
	lines := bytes.Split(event, []byte("\n"))
	for i, line := range lines {
		data, ok := bytes.CutPrefix(line, []byte("data: "))
		if !ok || !bytes.Contains(data, taskStatusMark) {
			continue
		}
		msg, err := jsonrpc.DecodeMessage(data)
		if err != nil {
			continue
		}
		if out := asTaskStatus(msg); out != msg {
			if enc, err := jsonrpc.EncodeMessage(out); err == nil {
				lines[i] = append([]byte("data: "), enc...)
			}
		}
	}
	return bytes.Join(lines, []byte("\n"))
}

// sessionLives gives each server session one context, ended when the session closes, so the
// watchers of its tasks stop with it: one goroutine per live session, not per task.
type sessionLives struct {
	mu   sync.Mutex
	ctxs map[*sdk.ServerSession]context.Context
}

func (l *sessionLives) of(ss *sdk.ServerSession) context.Context {
	l.mu.Lock()
	defer l.mu.Unlock()
	if ctx, ok := l.ctxs[ss]; ok {
		return ctx
	}
	if l.ctxs == nil {
		l.ctxs = map[*sdk.ServerSession]context.Context{}
	}
	ctx, end := context.WithCancel(context.Background())
	l.ctxs[ss] = ctx
	go func() {
		_ = ss.Wait()
		l.mu.Lock()
		delete(l.ctxs, ss)
		l.mu.Unlock()
		end()
	}()
	return ctx
}

// watchTask follows a task a 2025-11-25 client created on ss until its call closes, the session
// closes or a notification cannot be sent: it sends working (when created is), the call's progress
// for token when the request carried one (rule 6: every report, the last once the call has
// closed), then the terminal status: each status once, in order, the last report before it. One
// wait on the run per task, as for a plain call's result.
func (t *tasks) watchTask(ss *sdk.ServerSession, h *callHandler, req *sdk.CallToolRequest, token any, created Task, runID string) {
	life := t.sessions.of(ss)
	if created.Status == wire.MCPTaskWorking && notifyTaskStatus(life, ss, created) != nil {
		return
	}
	waitCtx, stopWaiting := context.WithCancel(life)
	defer stopWaiting()
	var progress *client.ProgressWatch
	if token != nil {
		progress = h.startProgress(life, req, token, created.TaskID, runID)
		go func() {
			<-progress.Done() // Finished, or nobody to tell any more: stop waiting
			stopWaiting()
		}()
	}
	st, resultErr, closed := t.waitClosed(waitCtx, created.TaskID, runID)
	progress.Finish(life, closed && resultErr == nil) // the last report before the terminal status
	if closed {
		_ = notifyTaskStatus(life, ss, t.withTTL(taskOf(st)))
	}
}

// waitClosed waits until the run of workflowID has closed and returns its status and the error
// ResultOfRun gave; closed is false when ctx ended first.
func (t *tasks) waitClosed(ctx context.Context, workflowID, runID string) (st client.Status, resultErr error, closed bool) {
	for {
		_, resultErr = t.tg.ResultOfRun(ctx, workflowID, runID)
		if ctx.Err() != nil {
			return client.Status{}, nil, false
		}
		st, err := t.tg.StatusByWorkflowID(ctx, workflowID)
		if err == nil && st.State != client.Running {
			return st, resultErr, true
		}
		select { // the wait failed while the call runs (Temporal unavailable): wait again
		case <-ctx.Done():
			return client.Status{}, nil, false
		case <-time.After(taskStatusRetry):
		}
	}
}
