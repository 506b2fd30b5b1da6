package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	sdkclient "go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/wire"
)

// TaskQueue is the agent worker's task queue (the tools run on the toolgate worker's).
const TaskQueue = "toolgate-agent"

// dialTimeout bounds the connection check, so a missing server is reported in seconds.
const dialTimeout = 10 * time.Second

// config is what the flags choose.
type config struct {
	address       string
	namespace     string
	apiKey        string
	taskQueue     string
	toolTaskQueue string
	workflowID    string
	prompt        string
	scriptPath    string
	example       string
	json          bool
	historyPath   string
	timeout       time.Duration
	maxToolCalls  int
}

// parseFlags reads args; the connection flags default to the Temporal CLI's environment
// variables, like toolgate's own commands.
func parseFlags(args []string, getenv func(string) string) (config, error) {
	env := func(name, fallback string) string {
		if v := getenv(name); v != "" {
			return v
		}
		return fallback
	}
	var c config
	fs := flag.NewFlagSet("agent", flag.ContinueOnError)
	fs.StringVar(&c.address, "address", env("TEMPORAL_ADDRESS", "127.0.0.1:7233"), "Temporal frontend host:port [$TEMPORAL_ADDRESS]")
	fs.StringVar(&c.namespace, "namespace", env("TEMPORAL_NAMESPACE", "default"), "Temporal namespace [$TEMPORAL_NAMESPACE]")
	fs.StringVar(&c.apiKey, "api-key", getenv("TEMPORAL_API_KEY"), "API key sent as a bearer token, over TLS [$TEMPORAL_API_KEY]")
	fs.StringVar(&c.taskQueue, "task-queue", TaskQueue, "task queue of the agent worker this process runs")
	fs.StringVar(&c.toolTaskQueue, "tool-task-queue", env("TOOLGATE_TASK_QUEUE", wire.DefaultTaskQueue), "task queue of the toolgate worker that runs the tools [$TOOLGATE_TASK_QUEUE]")
	fs.StringVar(&c.workflowID, "id", "", "agent workflow ID; a running agent with this ID is resumed, not started again (default: agent-<time>)")
	fs.StringVar(&c.prompt, "prompt", "", "the user's prompt (default: the example's)")
	fs.StringVar(&c.example, "example", "arithmetic", "the scripted model's conversation: arithmetic (add and echo) or coding (write a shell script, run it with exec, read its output: a worker with the sandbox on, toolgate dev --sandbox)")
	fs.StringVar(&c.scriptPath, "script", "", "JSON file of the scripted model's turns ({\"turns\":[{\"text\":...,\"toolCalls\":[...]}]}; default: the -example's script)")
	fs.BoolVar(&c.json, "json", false, "print the workflow ID, run ID and the agent's result as one JSON object")
	fs.StringVar(&c.historyPath, "history", "", "write the finished agent run's event history to this JSON file (the format `toolgate replay` and the replay tests read)")
	fs.IntVar(&c.maxToolCalls, "max-tool-calls", 0, "the run's budget of tool calls: a call beyond it is answered BUDGET_EXCEEDED and starts nothing (0: no budget)")
	fs.DurationVar(&c.timeout, "timeout", 2*time.Minute, "give up waiting for the answer after this long (the agent keeps running)")
	if err := fs.Parse(args); err != nil {
		return config{}, err
	}
	if _, ok := examples[c.example]; !ok {
		err := fmt.Errorf("-example %q: want arithmetic or coding", c.example)
		fmt.Fprintln(fs.Output(), err)
		return config{}, err
	}
	if c.prompt == "" {
		c.prompt = examples[c.example].prompt
	}
	if fs.NArg() > 0 {
		err := fmt.Errorf("unexpected arguments: %q", fs.Args())
		fmt.Fprintln(fs.Output(), err)
		return config{}, err
	}
	return c, nil
}

// examples are the scripted conversations -example picks.
var examples = map[string]struct {
	prompt string
	model  func() ScriptedModel
}{
	"arithmetic": {"What is 20 + 22?", ArithmeticModel},
	"coding":     {CodingPrompt, CodingModel},
}

// output is what -json prints.
type output struct {
	WorkflowID string `json:"workflowId"`
	RunID      string `json:"runId"`
	AgentResult
}

func main() {
	cfg, err := parseFlags(os.Args[1:], os.Getenv)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		os.Exit(2) // the flag set has printed the error and the usage
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "agent:", err)
		os.Exit(1)
	}
}

// run dials the server, starts the agent worker, runs (or resumes) one agent workflow and prints
// its answer.
func run(ctx context.Context, cfg config, stdout io.Writer) error {
	model := examples[cfg.example].model()
	if cfg.scriptPath != "" {
		script, err := readScript(cfg.scriptPath)
		if err != nil {
			return err
		}
		model = script.Model()
	}
	c, err := dial(ctx, cfg)
	if err != nil {
		return err
	}
	defer c.Close()
	w := NewWorker(c, cfg.namespace, cfg.taskQueue, model)
	if err := w.Start(); err != nil {
		return fmt.Errorf("start agent worker: %w", err)
	}
	defer w.Stop()

	id := cfg.workflowID
	if id == "" {
		id = fmt.Sprintf("agent-%d", time.Now().UnixNano())
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.timeout)
	defer cancel()
	wr, err := c.ExecuteWorkflow(ctx, sdkclient.StartWorkflowOptions{
		ID:        id,
		TaskQueue: cfg.taskQueue,
		// A second process with the same -id resumes the run instead of failing.
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
	}, AgentWorkflowName, AgentInput{Prompt: cfg.prompt, ToolTaskQueue: cfg.toolTaskQueue, MaxToolCalls: cfg.maxToolCalls})
	if err != nil {
		return fmt.Errorf("start agent %s: %w", id, err)
	}
	var result AgentResult
	if err := wr.Get(ctx, &result); err != nil {
		return fmt.Errorf("agent %s: %w", id, err)
	}
	if cfg.historyPath != "" {
		if err := writeHistory(ctx, c, wr.GetID(), wr.GetRunID(), cfg.historyPath); err != nil {
			return err
		}
	}
	if cfg.json {
		return json.NewEncoder(stdout).Encode(output{WorkflowID: wr.GetID(), RunID: wr.GetRunID(), AgentResult: result})
	}
	_, err = fmt.Fprintf(stdout, "answer after %d turns: %s\n", result.Turns, result.Answer)
	return err
}

// dial connects and checks that the server answers, within dialTimeout.
func dial(ctx context.Context, cfg config) (sdkclient.Client, error) {
	opts := sdkclient.Options{
		HostPort:  cfg.address,
		Namespace: cfg.namespace,
		Logger:    sdklog.NewStructuredLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))),
	}
	if cfg.apiKey != "" {
		opts.Credentials = sdkclient.NewAPIKeyStaticCredentials(cfg.apiKey)
	}
	dctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	c, err := sdkclient.DialContext(dctx, opts)
	if err != nil {
		return nil, fmt.Errorf("no Temporal server answers at %s (namespace %s): start one with `go run ./cmd/toolgate dev` (or `make dev`), or point -address / $TEMPORAL_ADDRESS at yours: %w",
			cfg.address, cfg.namespace, err)
	}
	return c, nil
}

// writeHistory writes the run's event history as JSON to path.
func writeHistory(ctx context.Context, c sdkclient.Client, id, runID, path string) error {
	hist, err := client.New(c, client.Options{}).History(ctx, id, runID)
	if err != nil {
		return err
	}
	data, err := client.HistoryJSON(hist)
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("write history: %w", err)
	}
	return nil
}

// readScript reads a Script from a JSON file.
func readScript(path string) (Script, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Script{}, fmt.Errorf("read script: %w", err)
	}
	var s Script
	if err := json.Unmarshal(data, &s); err != nil {
		return Script{}, fmt.Errorf("read script %s: %w", path, err)
	}
	if len(s.Turns) == 0 {
		return Script{}, fmt.Errorf("read script %s: no turns", path)
	}
	return s, nil
}

// NewWorker returns a worker for the agent on queue of namespace (c's): AgentWorkflow, CallModel
// with model, and the AwaitToolCall activity the round helper needs.
func NewWorker(c sdkclient.Client, namespace, queue string, model Model) sdkworker.Worker {
	w := sdkworker.New(c, queue, sdkworker.Options{})
	w.RegisterWorkflowWithOptions(AgentWorkflow, workflow.RegisterOptions{Name: AgentWorkflowName})
	w.RegisterActivityWithOptions((&ModelActivities{Model: model}).CallModel, activityOptions(CallModelName))
	client.New(c, client.Options{Namespace: namespace}).RegisterAwaitToolCall(w)
	return w
}
