package mcp

import (
	"encoding/json"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/wire"
)

// The ttl of a 2025-11-25 task: how long, from its creation, the server keeps it. A tools/call
// whose "task" asks for a ttl gets that ttl, bounded by the server's maximum (Options.TaskTTL,
// the namespace's retention, when known), and every answer about the task from this server
// reports it; a task created without one, or asked about on another server process, reports the
// maximum (null when unknown: unlimited). Temporal keeps a closed call for the retention after
// it closed, so a task is never deleted before the ttl reported.

// maxRememberedTTLs bounds the requested ttls a server remembers; the oldest go first (their
// tasks then report the maximum, which is never shorter).
const maxRememberedTTLs = 4096

// taskTTLs remembers the ttl granted to each task this server created.
type taskTTLs struct {
	mu    sync.Mutex
	byID  map[string]int64 // task ID -> ttl (ms)
	order []string         // oldest first
}

// requestedTTL is the ttl (ms) the "task" member of a tools/call asks for, if any.
func requestedTTL(req *sdk.CallToolRequest) (int64, bool) {
	raw, err := json.Marshal(req.Params.Meta[wire.MCPTaskMeta])
	if err != nil {
		return 0, false
	}
	var task struct {
		TTL *int64 `json:"ttl"`
	}
	if json.Unmarshal(raw, &task) != nil || task.TTL == nil || *task.TTL <= 0 {
		return 0, false
	}
	return *task.TTL, true
}

// grant records the ttl of a task created by req: the requested one bounded by maxTTL.
func (l *taskTTLs) grant(taskID string, req *sdk.CallToolRequest, maxTTL time.Duration) {
	ttl, ok := requestedTTL(req)
	if !ok {
		return
	}
	if maxTTL > 0 {
		ttl = min(ttl, maxTTL.Milliseconds())
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.byID == nil {
		l.byID = map[string]int64{}
	}
	if _, known := l.byID[taskID]; !known {
		l.order = append(l.order, taskID)
	}
	l.byID[taskID] = ttl
	for len(l.order) > maxRememberedTTLs {
		delete(l.byID, l.order[0])
		l.order = l.order[1:]
	}
}

// of is the ttl to report for taskID: the one granted, else maxTTL, else nil (unlimited).
func (l *taskTTLs) of(taskID string, maxTTL time.Duration) *int64 {
	l.mu.Lock()
	ttl, ok := l.byID[taskID]
	l.mu.Unlock()
	if !ok {
		if maxTTL <= 0 {
			return nil
		}
		ttl = maxTTL.Milliseconds()
	}
	return &ttl
}

// withTTL is task with the ttl this server reports for it.
func (t *tasks) withTTL(task Task) Task {
	task.TTL = t.ttls.of(task.TaskID, t.ttl)
	return task
}
