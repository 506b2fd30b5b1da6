package mcp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/internal/devtest"
	"github.com/toolgate/toolgate/mcp"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
	"github.com/toolgate/toolgate/worker"
)

// tasksClientArg makes the test binary a 2026-07-28 MCP client of `toolgate mcp` (TestMain):
// go-sdk's client, in a process of its own, runs runTasksClient's script against the server that
// $TASKS_CLIENT_URL names (streamable HTTP) or that $TASKS_CLIENT_COMMAND (a JSON argv) spawns
// over stdio, and reports each step as a JSON line on stdout; it waits for a line on stdin
// where the test must see something first.
const tasksClientArg = "mcp-tasks-client"

// extTools are the tools of the tasks extension tests and what they observed.
type extTools struct {
	mu      sync.Mutex
	runs    map[string]int
	started chan struct{} // ext_hold started
	stopped chan error    // ext_hold saw its context end, with the cause
	slow    chan struct{} // closed: ext_slow answers
}

type extArgs struct {
	Text string `json:"text,omitempty"`
	A    int    `json:"a,omitempty"`
	B    int    `json:"b,omitempty"`
	Item string `json:"item,omitempty"`
}

// startExtWorker runs the extension tests' tools on a worker in this process: ext_echo answers
// at once, ext_sum adds, ext_slow adds once the test closes extTools.slow, ext_hold waits until canceled, ext_release and ext_operator require
// approval (ext_release by its caller, ext_operator by an operator, ext_reviewed by its caller
// if that is alice), ext_required adds too.
func startExtWorker(t *testing.T) (*extTools, string) {
	et, reg := extRegistry(t)
	queue := devtest.TaskQueue(t)
	w, err := worker.New(devtest.Client(t), "", reg, worker.Options{TaskQueue: queue})
	require.NoError(t, err)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	return et, queue
}

// extRegistry is startExtWorker's tools, for a test that runs their workers itself.
func extRegistry(t *testing.T) (*extTools, *toolcore.Registry) {
	et := &extTools{runs: map[string]int{}, started: make(chan struct{}, 4), stopped: make(chan error, 4), slow: make(chan struct{})}
	sum := func(_ context.Context, a extArgs) (any, error) { return map[string]any{"sum": a.A + a.B}, nil }
	release := func(_ context.Context, a extArgs) (any, error) {
		et.mu.Lock()
		defer et.mu.Unlock()
		et.runs[a.Item]++
		return map[string]any{"released": a.Item}, nil
	}
	reg, err := toolcore.NewRegistry(
		toolcore.MustDefine(toolcore.Definition[extArgs]{Name: "ext_echo", Description: "Echo the text.",
			Execute: func(_ context.Context, a extArgs) (any, error) { return map[string]any{"text": a.Text}, nil },
			Options: toolcore.Options{SideEffect: toolcore.ReadOnly}}),
		toolcore.MustDefine(toolcore.Definition[extArgs]{Name: "ext_sum", Description: "Add a and b.", Execute: sum,
			Options: toolcore.Options{SideEffect: toolcore.ReadOnly}}),
		toolcore.MustDefine(toolcore.Definition[extArgs]{Name: "ext_required", Description: "Add a and b, as a task.", Execute: sum,
			Options: toolcore.Options{SideEffect: toolcore.ReadOnly}}),
		toolcore.MustDefine(toolcore.Definition[extArgs]{Name: "ext_slow", Description: "Add a and b once the test lets it.",
			Execute: func(ctx context.Context, a extArgs) (any, error) {
				select {
				case <-et.slow:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
				return sum(ctx, a)
			},
			Options: toolcore.Options{SideEffect: toolcore.ReadOnly}}),
		toolcore.MustDefine(toolcore.Definition[extArgs]{Name: "ext_hold", Description: "Wait until canceled.",
			Execute: func(ctx context.Context, _ extArgs) (any, error) {
				et.started <- struct{}{}
				<-ctx.Done()
				et.stopped <- ctx.Err()
				return nil, ctx.Err()
			},
			Options: toolcore.Options{SideEffect: toolcore.ReadOnly}}),
		toolcore.MustDefine(toolcore.Definition[extArgs]{Name: "ext_release", Description: "Release the item, once its caller approves.",
			Execute: release, Options: toolcore.Options{RequireApproval: true, ApprovalByCaller: true}}),
		toolcore.MustDefine(toolcore.Definition[extArgs]{Name: "ext_operator", Description: "Release the item, once an operator approves.",
			Execute: release, Options: toolcore.Options{RequireApproval: true}}),
		toolcore.MustDefine(toolcore.Definition[extArgs]{Name: "ext_reviewed", Description: "Release the item, once alice approves.",
			Execute: release, Options: toolcore.Options{RequireApproval: true, ApprovalByCaller: true, Reviewers: []string{"alice"}}}),
	)
	require.NoError(t, err)
	return et, reg
}

func (et *extTools) runsOf(item string) int {
	et.mu.Lock()
	defer et.mu.Unlock()
	return et.runs[item]
}

// extFlags are the `toolgate mcp` flags of the extension tests.
var extFlags = []string{"--task-support-forbidden", "ext_echo", "--task-support-required", "ext_required"}

// A 2026-07-28 client (go-sdk's, in a process of its own) runs tools/list, a sync call, a task
// to completion, a cancel and approvals through input_required against a real `toolgate mcp`
// process, over stdio and over streamable HTTP (issue 23 item 5; contract 10.24-10.28).
func TestTasksExtensionGoClient(t *testing.T) {
	t.Run("stdio", func(t *testing.T) {
		et, queue := startExtWorker(t)
		argv, err := json.Marshal(mcpCommand(t, &fixture{queue: queue}, extFlags...))
		require.NoError(t, err)
		runExtClient(t, et, func() {}, "TASKS_CLIENT_COMMAND="+string(argv))
	})
	t.Run("http", func(t *testing.T) {
		et, queue := startExtWorker(t)
		server := startMCPProcess(t, &fixture{queue: queue}, extFlags...)
		other := startMCPProcess(t, &fixture{queue: queue}, extFlags...)
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("toolgate mcp:\n%s\nthe other toolgate mcp:\n%s", server.log(), other.log())
			}
		})
		// The first server dies while the call waits for approval; the other one takes the decision.
		runExtClient(t, et, func() { require.NoError(t, server.cmd.Process.Kill()) }, "TASKS_CLIENT_URL="+server.url, "TASKS_CLIENT_URL2="+other.url)
	})
}

// extStep is one line of the client's report.
type extStep map[string]any

func (s extStep) str(key string) string { v, _ := s[key].(string); return v }

// runExtClient runs the client process with env and checks its report step by step; asked runs
// while the first approval waits, before the client decides it through another server process.
func runExtClient(t *testing.T, et *extTools, asked func(), env ...string) {
	cmd := exec.CommandContext(t.Context(), os.Args[0], tasksClientArg)
	cmd.Env = append(childEnv(), env...)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	report, wait := lineReport(t, cmd)
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	next := func(step string) extStep {
		t.Helper()
		var s extStep
		report(&s)
		require.Equal(t, step, s.str("step"), "%v", s)
		return s
	}

	s := next("connected")
	assert.Equal(t, "2026-07-28", s.str("protocolVersion"))
	assert.Equal(t, map[string]any{}, s["tasksExtension"], "server/discover advertises the extension: %v", s)
	assert.Nil(t, s["tasksSlot"], "no 2025-11-25 capabilities.tasks for 2026-07-28")

	s = next("tools")
	assert.Equal(t, map[string]any{"ext_echo": "forbidden", "ext_sum": "optional", "ext_required": "required", "ext_slow": "optional",
		"ext_hold": "optional", "ext_release": "optional", "ext_operator": "optional", "ext_reviewed": "optional"}, s["taskSupport"])

	s = next("sync")
	assert.Equal(t, "complete", s.str("resultType"))
	assert.JSONEq(t, `{"text":"hi"}`, s.str("text"))
	assert.Nil(t, s["taskId"])

	// A quick call is answered inline although the client allows tasks (mcp.TaskInlineWindow).
	s = next("inline")
	assert.Equal(t, "complete", s.str("resultType"))
	assert.JSONEq(t, `{"sum":5}`, s.str("text"))
	assert.Nil(t, s["taskId"])

	s = next("task")
	assert.Equal(t, "task", s.str("resultType"))
	assert.NotEmpty(t, s.str("taskId"))
	assert.Equal(t, "working", s.str("status"), "ext_slow waits for the test")
	retention, err := mcp.NamespaceRetention(t.Context(), devtest.Client(t), devtest.Server(t).Namespace())
	require.NoError(t, err)
	assert.Equal(t, float64(retention.Milliseconds()), s["ttlMs"], "ttlMs is the namespace's retention")
	assert.Equal(t, float64(500), s["pollIntervalMs"])
	assert.Equal(t, s.str("taskId"), s.str("getTaskId"), "tasks/get resolves the task at once")
	close(et.slow)
	s = next("task-done")
	assert.Equal(t, "completed", s.str("status"))
	assert.Equal(t, "complete", s.str("resultType"))
	assert.Equal(t, "complete", s.str("inlinedResultType"), "the inlined result carries resultType, as a synchronous one does")
	assert.JSONEq(t, `{"sum":5}`, s.str("text"))
	assert.Equal(t, false, s["isError"])
	assert.Equal(t, false, s["relatedTaskMeta"])

	next("hold")
	select {
	case <-et.started:
	case <-t.Context().Done():
		t.Fatal("ext_hold never started")
	}
	_, err = fmt.Fprintln(stdin, "go")
	require.NoError(t, err)
	s = next("cancelled")
	assert.Equal(t, "complete", s.str("ackResultType"))
	assert.Equal(t, "cancelled", s.str("status"))
	assert.Equal(t, "complete", s.str("againResultType"), "cancelling a terminal task is acknowledged")
	assert.ErrorIs(t, <-et.stopped, context.Canceled, "the tool saw its context canceled")

	s = next("approval-asked")
	assert.Equal(t, "input_required", s.str("status"))
	assert.True(t, strings.HasPrefix(s.str("key"), wire.MCPApprovalInputPrefix+"sha256:"), s.str("key"))
	assert.Equal(t, "elicitation/create", s.str("method"))
	assert.Contains(t, s.str("message"), "ext_release")
	assert.Contains(t, s.str("message"), `{"item":"a"}`)
	assert.Contains(t, s.str("message"), strings.TrimPrefix(s.str("key"), wire.MCPApprovalInputPrefix), "the message names the call hash")
	assert.Equal(t, "object", s["schema"].(map[string]any)["type"])
	assert.Zero(t, et.runsOf("a"), "nothing runs before the decision")
	asked()
	_, err = fmt.Fprintln(stdin, "go")
	require.NoError(t, err)
	s = next("approved")
	assert.Equal(t, "complete", s.str("ackResultType"))
	assert.Equal(t, "completed", s.str("status"))
	assert.Equal(t, false, s["isError"])
	assert.JSONEq(t, `{"released":"a"}`, s.str("text"))
	assert.Equal(t, 1, et.runsOf("a"), "approved: the tool ran once")

	s = next("declined")
	assert.Equal(t, "completed", s.str("status"), "a rejection is an error result, not a failed task")
	assert.Equal(t, true, s["isError"])
	assert.Contains(t, s.str("text"), toolcore.CodeToolApprovalRejected.String())
	assert.Contains(t, s.str("text"), "not today")
	assert.Zero(t, et.runsOf("b"), "declined: the tool never ran")

	s = next("operator")
	assert.Equal(t, "working", s.str("status"))
	assert.Contains(t, s.str("statusMessage"), "operator")
	assert.Nil(t, s["inputRequests"])
	assert.Equal(t, float64(jsonrpc.CodeInvalidParams), s["forgedCode"], "a caller cannot decide an operator's approval: %v", s["forgedMessage"])
	assert.Equal(t, "cancelled", s.str("finalStatus"))
	assert.Zero(t, et.runsOf("c"))

	s = next("reviewed")
	assert.Equal(t, float64(jsonrpc.CodeInvalidParams), s["refusedCode"], "the tool's Reviewers refuse the caller (mcp): %v", s["refusedMessage"])
	assert.Contains(t, s.str("refusedMessage"), "refused")
	assert.Equal(t, "input_required", s.str("after"), "a refused decision leaves the call waiting")
	assert.Zero(t, et.runsOf("d"))

	s = next("errors")
	assert.Equal(t, float64(jsonrpc.CodeInvalidParams), s["unknownGet"])
	assert.Equal(t, float64(jsonrpc.CodeInvalidParams), s["unknownCancel"])
	assert.Equal(t, float64(jsonrpc.CodeMethodNotFound), s["tasksResult"])
	assert.Equal(t, float64(jsonrpc.CodeMethodNotFound), s["tasksList"])

	s = next("undeclared")
	assert.Equal(t, "complete", s.str("resultType"), "without the extension a task-supporting tool answers at once")
	assert.JSONEq(t, `{"sum":3}`, s.str("text"))
	assert.Equal(t, float64(wire.MCPCodeMissingRequiredClientCapability), s["requiredCode"])
	assert.Equal(t, map[string]any{"requiredCapabilities": map[string]any{"extensions": map[string]any{wire.MCPTasksExtension: map[string]any{}}}}, s["requiredData"])
	assert.Equal(t, float64(wire.MCPCodeMissingRequiredClientCapability), s["getCode"])

	next("done")
	wait()
}

// --- the client process ---

// recordingTransport keeps the raw result of every response the client reads: go-sdk's typed
// results drop what the tasks extension adds (a CreateTaskResult's taskId, execution.taskSupport).
type recordingTransport struct {
	sdk.Transport
	mu      sync.Mutex
	results []json.RawMessage
}

func (r *recordingTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	conn, err := r.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &recordingConn{Connection: conn, r: r}, nil
}

// last is the raw result of the latest response read (the client's requests are sequential).
func (r *recordingTransport) last() map[string]any {
	r.mu.Lock()
	defer r.mu.Unlock()
	var m map[string]any
	if len(r.results) > 0 {
		_ = json.Unmarshal(r.results[len(r.results)-1], &m)
	}
	return m
}

// find is the latest raw result that has key.
func (r *recordingTransport) find(key string) map[string]any {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := len(r.results) - 1; i >= 0; i-- {
		var m map[string]any
		if json.Unmarshal(r.results[i], &m) == nil {
			if _, ok := m[key]; ok {
				return m
			}
		}
	}
	return nil
}

type recordingConn struct {
	sdk.Connection
	r *recordingTransport
}

func (c *recordingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if resp, ok := msg.(*jsonrpc.Response); ok && resp.Result != nil {
		c.r.mu.Lock()
		c.r.results = append(c.r.results, resp.Result)
		c.r.mu.Unlock()
	}
	return msg, err
}

type extTaskParams struct {
	sdk.ParamsBase
	TaskID         string         `json:"taskId,omitempty"`
	InputResponses map[string]any `json:"inputResponses,omitempty"`
}

// extTask is a tasks/* result as the client reads it.
type extTask struct {
	sdk.ResultBase
	ResultType    string `json:"resultType"`
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	StatusMessage string `json:"statusMessage"`
	InputRequests map[string]struct {
		Method string `json:"method"`
		Params struct {
			Message         string         `json:"message"`
			RequestedSchema map[string]any `json:"requestedSchema"`
		} `json:"params"`
	} `json:"inputRequests"`
	Result *struct {
		ResultType string         `json:"resultType"`
		Meta       map[string]any `json:"_meta"`
		Content    []struct {
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	} `json:"result"`
	PollIntervalMs int64 `json:"pollIntervalMs"`
}

// extSession is one client session of the script.
type extSession struct {
	rec *recordingTransport
	cs  *sdk.ClientSession
}

func newExtClient(declareTasks bool) *sdk.Client {
	caps := &sdk.ClientCapabilities{}
	if declareTasks {
		caps.Extensions = map[string]any{wire.MCPTasksExtension: map[string]any{}}
	}
	c := sdk.NewClient(&sdk.Implementation{Name: "tasks-client", Version: "1"}, &sdk.ClientOptions{Capabilities: caps})
	for _, method := range []string{wire.MCPMethodTasksGet, wire.MCPMethodTasksUpdate, wire.MCPMethodTasksCancel, wire.MCPMethodTasksResult, wire.MCPMethodTasksList} {
		if err := sdk.AddSendingCustomMethod[*extTaskParams, *extTask](c, method); err != nil {
			panic(err)
		}
	}
	return c
}

// connectExt connects a session to $TASKS_CLIENT_URL, or to $TASKS_CLIENT_URL2 when second (the
// HTTP test's other server process); over stdio each session spawns a server process of its own.
func connectExt(ctx context.Context, declareTasks, second bool) (*extSession, error) {
	var transport sdk.Transport
	url := os.Getenv("TASKS_CLIENT_URL")
	if second {
		url = os.Getenv("TASKS_CLIENT_URL2")
	}
	if url != "" {
		// go-sdk does not send the task methods' Mcp-Name, which HTTPHandler requires.
		transport = &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: mcp.TaskRoutingTransport(nil)}}
	} else {
		var argv []string
		if err := json.Unmarshal([]byte(os.Getenv("TASKS_CLIENT_COMMAND")), &argv); err != nil {
			return nil, err
		}
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Stderr = os.Stderr
		transport = &sdk.CommandTransport{Command: cmd}
	}
	rec := &recordingTransport{Transport: transport}
	cs, err := newExtClient(declareTasks).Connect(ctx, rec, &sdk.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	if err != nil {
		return nil, err
	}
	return &extSession{rec: rec, cs: cs}, nil
}

func (s *extSession) task(ctx context.Context, method, taskID string, inputResponses map[string]any) (*extTask, error) {
	return sdk.CallCustomMethod[*extTaskParams, *extTask](ctx, s.cs, method, &extTaskParams{TaskID: taskID, InputResponses: inputResponses})
}

// until polls tasks/get every pollIntervalMs until done says the task is there.
func (s *extSession) until(ctx context.Context, taskID string, done func(*extTask) bool) (*extTask, error) {
	for {
		task, err := s.task(ctx, wire.MCPMethodTasksGet, taskID, nil)
		if err != nil || done(task) {
			return task, err
		}
		select {
		case <-time.After(time.Duration(task.PollIntervalMs) * time.Millisecond):
		case <-ctx.Done():
			return nil, fmt.Errorf("task %s: %w (last %s %q)", taskID, ctx.Err(), task.Status, task.StatusMessage)
		}
	}
}

func terminal(task *extTask) bool {
	return task.Status == "completed" || task.Status == "failed" || task.Status == "cancelled"
}

// callTask calls a tool that answers with a task and returns its ID.
func (s *extSession) callTask(ctx context.Context, name string, args map[string]any) (string, error) {
	if _, err := s.cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args}); err != nil {
		return "", err
	}
	created := s.rec.last()
	taskID, _ := created["taskId"].(string)
	if created["resultType"] != "task" || taskID == "" {
		return "", fmt.Errorf("tools/call %s answered no task: %v", name, created)
	}
	return taskID, nil
}

func rpcCode(err error) any {
	var rpcErr *jsonrpc.Error
	if errors.As(err, &rpcErr) {
		return rpcErr.Code
	}
	if err != nil {
		return err.Error()
	}
	return nil
}

func extResultText(task *extTask) (string, bool) {
	if task.Result == nil || len(task.Result.Content) == 0 {
		return "", false
	}
	return task.Result.Content[0].Text, task.Result.IsError
}

func runTasksClient() int {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out := json.NewEncoder(os.Stdout)
	report := func(step string, fields map[string]any) {
		fields["step"] = step
		_ = out.Encode(fields)
	}
	if err := tasksClientScript(ctx, report); err != nil {
		report("error", map[string]any{"error": err.Error()})
		return 1
	}
	report("done", map[string]any{})
	return 0
}

func tasksClientScript(ctx context.Context, report func(string, map[string]any)) error {
	s, err := connectExt(ctx, true, false)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	first := s
	defer func() {
		_ = first.cs.Close()
		if s != first {
			_ = s.cs.Close()
		}
	}()
	discovered := s.rec.find("supportedVersions")
	caps, _ := discovered["capabilities"].(map[string]any)
	extensions, _ := caps["extensions"].(map[string]any)
	version := ""
	if res := s.cs.InitializeResult(); res != nil {
		version = res.ProtocolVersion
	}
	report("connected", map[string]any{"protocolVersion": version, "tasksExtension": extensions[wire.MCPTasksExtension], "tasksSlot": caps["tasks"]})

	if _, err := s.cs.ListTools(ctx, nil); err != nil {
		return fmt.Errorf("tools/list: %w", err)
	}
	support := map[string]any{}
	tools, _ := s.rec.last()["tools"].([]any)
	for _, tool := range tools {
		tool, _ := tool.(map[string]any)
		execution, _ := tool["execution"].(map[string]any)
		support[tool["name"].(string)] = execution["taskSupport"]
	}
	report("tools", map[string]any{"taskSupport": support})

	res, err := s.cs.CallTool(ctx, &sdk.CallToolParams{Name: "ext_echo", Arguments: map[string]any{"text": "hi"}})
	if err != nil {
		return fmt.Errorf("sync call: %w", err)
	}
	raw := s.rec.last()
	report("sync", map[string]any{"resultType": raw["resultType"], "taskId": raw["taskId"], "text": res.Content[0].(*sdk.TextContent).Text})

	// A quick call, answered inline.
	res, err = s.cs.CallTool(ctx, &sdk.CallToolParams{Name: "ext_sum", Arguments: map[string]any{"a": 2, "b": 3}})
	if err != nil {
		return fmt.Errorf("inline call: %w", err)
	}
	raw = s.rec.last()
	inline := map[string]any{"resultType": raw["resultType"], "taskId": raw["taskId"], "text": ""}
	if len(res.Content) > 0 {
		if text, ok := res.Content[0].(*sdk.TextContent); ok {
			inline["text"] = text.Text
		}
	}
	report("inline", inline)

	// A task, polled to completion.
	if _, err := s.cs.CallTool(ctx, &sdk.CallToolParams{Name: "ext_slow", Arguments: map[string]any{"a": 2, "b": 3}}); err != nil {
		return fmt.Errorf("task call: %w", err)
	}
	created := s.rec.last()
	taskID, _ := created["taskId"].(string)
	got, err := s.task(ctx, wire.MCPMethodTasksGet, taskID, nil)
	if err != nil {
		return fmt.Errorf("tasks/get right after creation: %w", err)
	}
	created["getTaskId"] = got.TaskID
	report("task", created)
	done, err := s.until(ctx, taskID, terminal)
	if err != nil {
		return err
	}
	text, isError := extResultText(done)
	_, related := done.Result.Meta[wire.MCPRelatedTaskMeta]
	report("task-done", map[string]any{"status": done.Status, "resultType": done.ResultType, "text": text, "isError": isError, "relatedTaskMeta": related,
		"inlinedResultType": done.Result.ResultType})

	// A cancel, once the test has seen the tool start.
	if taskID, err = s.callTask(ctx, "ext_hold", map[string]any{}); err != nil {
		return err
	}
	report("hold", map[string]any{"taskId": taskID})
	stdin := bufio.NewScanner(os.Stdin)
	if !stdin.Scan() {
		return errors.New("no go-ahead on stdin")
	}
	ack, err := s.task(ctx, wire.MCPMethodTasksCancel, taskID, nil)
	if err != nil {
		return fmt.Errorf("tasks/cancel: %w", err)
	}
	got, err = s.task(ctx, wire.MCPMethodTasksGet, taskID, nil)
	if err != nil {
		return err
	}
	again, err := s.task(ctx, wire.MCPMethodTasksCancel, taskID, nil)
	if err != nil {
		return fmt.Errorf("tasks/cancel of a cancelled task: %w", err)
	}
	report("cancelled", map[string]any{"ackResultType": ack.ResultType, "status": got.Status, "againResultType": again.ResultType})

	// Approvals through input_required and tasks/update.
	// asking may return another session to decide through (nil: the same).
	decide := func(item, action string, content map[string]any, asking func(asked *extTask, key string) (*extSession, error)) (final *extTask, ackType string, err error) {
		taskID, err := s.callTask(ctx, "ext_release", map[string]any{"item": item})
		if err != nil {
			return nil, "", err
		}
		asked, err := s.until(ctx, taskID, func(task *extTask) bool { return task.Status == "input_required" || terminal(task) })
		if err != nil {
			return nil, "", err
		}
		if asked.Status != "input_required" {
			return nil, "", fmt.Errorf("ext_release ended %s without asking", asked.Status)
		}
		responses := map[string]any{}
		deciding := s
		for key := range asked.InputRequests {
			responses[key] = map[string]any{"action": action, "content": content}
			other, err := asking(asked, key)
			if err != nil {
				return nil, "", err
			}
			if other != nil {
				deciding = other
			}
		}
		ack, err := deciding.task(ctx, wire.MCPMethodTasksUpdate, taskID, responses)
		if err != nil {
			return nil, "", fmt.Errorf("tasks/update: %w", err)
		}
		final, err = deciding.until(ctx, taskID, terminal)
		return final, ack.ResultType, err
	}
	// The decision goes through another server process: every answer reads Temporal.
	final, ackType, err := decide("a", "accept", map[string]any{"approve": true}, func(asked *extTask, key string) (*extSession, error) {
		request := asked.InputRequests[key]
		report("approval-asked", map[string]any{"status": asked.Status, "key": key, "method": request.Method,
			"message": request.Params.Message, "schema": request.Params.RequestedSchema})
		if !stdin.Scan() {
			return nil, errors.New("no go-ahead on stdin")
		}
		other, err := connectExt(ctx, true, true)
		if err != nil {
			return nil, fmt.Errorf("connect to the other server: %w", err)
		}
		s = other // from now on (over HTTP the first server is dead)
		return other, nil
	})
	if err != nil {
		return err
	}
	text, isError = extResultText(final)
	report("approved", map[string]any{"ackResultType": ackType, "status": final.Status, "text": text, "isError": isError})
	if final, _, err = decide("b", "decline", map[string]any{"reason": "not today"}, func(*extTask, string) (*extSession, error) { return nil, nil }); err != nil {
		return err
	}
	text, isError = extResultText(final)
	report("declined", map[string]any{"status": final.Status, "text": text, "isError": isError})

	// An operator's approval: the task works on, and a forged decision is refused.
	if taskID, err = s.callTask(ctx, "ext_operator", map[string]any{"item": "c"}); err != nil {
		return err
	}
	waiting, err := s.until(ctx, taskID, func(task *extTask) bool { return task.StatusMessage != "" || terminal(task) })
	if err != nil {
		return err
	}
	_, forged := s.task(ctx, wire.MCPMethodTasksUpdate, taskID, map[string]any{
		wire.MCPApprovalInputPrefix + "sha256:0000": map[string]any{"action": "accept", "content": map[string]any{"approve": true}}})
	if _, err := s.task(ctx, wire.MCPMethodTasksCancel, taskID, nil); err != nil {
		return err
	}
	closed, err := s.task(ctx, wire.MCPMethodTasksGet, taskID, nil)
	if err != nil {
		return err
	}
	fields := map[string]any{"status": waiting.Status, "statusMessage": waiting.StatusMessage, "forgedCode": rpcCode(forged), "finalStatus": closed.Status}
	if waiting.InputRequests != nil {
		fields["inputRequests"] = waiting.InputRequests
	}
	if forged != nil {
		fields["forgedMessage"] = forged.Error()
	}
	report("operator", fields)

	// A caller the tool's Reviewers do not name: refused, and the call goes on waiting.
	if taskID, err = s.callTask(ctx, "ext_reviewed", map[string]any{"item": "d"}); err != nil {
		return err
	}
	asked, err := s.until(ctx, taskID, func(task *extTask) bool { return task.Status == "input_required" || terminal(task) })
	if err != nil {
		return err
	}
	responses := map[string]any{}
	for key := range asked.InputRequests {
		responses[key] = map[string]any{"action": "accept", "content": map[string]any{"approve": true}}
	}
	_, refused := s.task(ctx, wire.MCPMethodTasksUpdate, taskID, responses)
	after, err := s.task(ctx, wire.MCPMethodTasksGet, taskID, nil)
	if err != nil {
		return err
	}
	fields = map[string]any{"refusedCode": rpcCode(refused), "after": after.Status}
	if refused != nil {
		fields["refusedMessage"] = refused.Error()
	}
	report("reviewed", fields)
	if _, err := s.task(ctx, wire.MCPMethodTasksCancel, taskID, nil); err != nil {
		return err
	}

	_, unknownGet := s.task(ctx, wire.MCPMethodTasksGet, "mcp/toolcall-no-such-task", nil)
	_, unknownCancel := s.task(ctx, wire.MCPMethodTasksCancel, "mcp/toolcall-no-such-task", nil)
	_, tasksResult := s.task(ctx, wire.MCPMethodTasksResult, taskID, nil)
	_, tasksList := s.task(ctx, wire.MCPMethodTasksList, "", nil)
	report("errors", map[string]any{"unknownGet": rpcCode(unknownGet), "unknownCancel": rpcCode(unknownCancel),
		"tasksResult": rpcCode(tasksResult), "tasksList": rpcCode(tasksList)})

	// A client that does not declare the extension gets no task.
	plain, err := connectExt(ctx, false, true)
	if err != nil {
		return fmt.Errorf("connect without the extension: %w", err)
	}
	defer plain.cs.Close()
	res, err = plain.cs.CallTool(ctx, &sdk.CallToolParams{Name: "ext_sum", Arguments: map[string]any{"a": 1, "b": 2}})
	if err != nil {
		return fmt.Errorf("undeclared call: %w", err)
	}
	raw = plain.rec.last()
	fields = map[string]any{"resultType": raw["resultType"], "text": ""}
	if len(res.Content) > 0 {
		fields["text"] = res.Content[0].(*sdk.TextContent).Text
	}
	_, required := plain.cs.CallTool(ctx, &sdk.CallToolParams{Name: "ext_required", Arguments: map[string]any{"a": 1, "b": 2}})
	fields["requiredCode"] = rpcCode(required)
	var rpcErr *jsonrpc.Error
	if errors.As(required, &rpcErr) {
		var data any
		_ = json.Unmarshal(rpcErr.Data, &data)
		fields["requiredData"] = data
	}
	_, get := plain.task(ctx, wire.MCPMethodTasksGet, taskID, nil)
	fields["getCode"] = rpcCode(get)
	report("undeclared", fields)
	return nil
}

// For a 2025-11-25 client, task support per tool holds too: a task-augmented call of a forbidden
// tool and a plain call of a required one are -32601, and start nothing (contract 10.24).
func TestTaskSupportAt20251125(t *testing.T) {
	f := newFixture(t)
	s := mcp.NewServer(f.tg, f.infos, mcp.Options{TaskSupportForbidden: []string{"ech?"}, TaskSupportRequired: []string{"count", "echo"}})
	serverT, clientT := sdk.NewInMemoryTransports()
	ss, err := s.Connect(t.Context(), serverT, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ss.Close() })
	cs, err := newExtClient(false).Connect(t.Context(), clientT, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })
	require.Equal(t, "2025-11-25", cs.InitializeResult().ProtocolVersion)

	_, err = cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"},
		Meta: sdk.Meta{wire.MCPTaskMeta: map[string]any{}}})
	assert.EqualValues(t, jsonrpc.CodeMethodNotFound, rpcCode(err), "forbidden wins over required: %v", err)
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}})
	require.NoError(t, err, "a forbidden tool answers a plain call")
	assert.False(t, res.IsError)

	_, err = cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "count", Arguments: map[string]any{"key": "required-plain"}})
	assert.EqualValues(t, jsonrpc.CodeMethodNotFound, rpcCode(err), "%v", err)
	assert.Zero(t, f.tools.runsOf("required-plain"), "nothing started")
	_, err = sdk.CallCustomMethod[*extTaskParams, *extTask](t.Context(), cs, wire.MCPMethodTasksUpdate, &extTaskParams{TaskID: "x"})
	assert.EqualValues(t, jsonrpc.CodeMethodNotFound, rpcCode(err), "tasks/update is of the 2026-07-28 extension: %v", err)
}
