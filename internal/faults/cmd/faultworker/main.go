// Command faultworker is the test-only process of package faults: a toolgate worker serving the
// ledger-writing fault tools, or an agent that runs a list of tool calls durably. The fault tests
// start it, kill it with SIGKILL, and start it again.
//
//	faultworker worker -address 127.0.0.1:7233 -task-queue q -ledger /tmp/x/ledger [-hold] [-stop-timeout 30s]
//	faultworker agent  -address 127.0.0.1:7233 -task-queue q -calls calls.jsonl [-concurrency 16]
//
// worker also hosts the agent workflows of the undo and inline scenarios (faults.BookingAgent,
// faults.InlineAgent with the worker's registry). It prints "ready <pid>" on stdout once it polls, logs JSON lines on stderr, and stops
// gracefully on SIGINT or SIGTERM. agent reads one tool call per line, runs them with
// client.Execute (a resubmitted call attaches to its recorded execution), and prints one
// [faults.AgentLine] per call on stdout as its outcome arrives; it exits 0 once every call has
// an outcome.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/workflow"
	"go.uber.org/zap"

	tgclient "github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/internal/faults"
	"github.com/toolgate/toolgate/internal/logging"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/worker"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: faultworker worker|agent [flags]")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	switch os.Args[1] {
	case "worker":
		err = runWorker(ctx, os.Args[2:])
	case "agent":
		err = runAgent(ctx, os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q (want worker or agent)", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "faultworker:", err)
		os.Exit(1)
	}
}

type conn struct {
	address   string
	namespace string
	taskQueue string
}

func (c *conn) flags(fs *flag.FlagSet) {
	fs.StringVar(&c.address, "address", "127.0.0.1:7233", "Temporal frontend host:port")
	fs.StringVar(&c.namespace, "namespace", "default", "namespace")
	fs.StringVar(&c.taskQueue, "task-queue", "faults", "task queue")
}

func (c *conn) dial(ctx context.Context, logger *zap.Logger) (client.Client, error) {
	sdk, err := client.DialContext(ctx, client.Options{
		HostPort:  c.address,
		Namespace: c.namespace,
		Logger:    logging.Temporal(logger),
	})
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", c.address, err)
	}
	return sdk, nil
}

func jsonLogger(level zap.AtomicLevel) (*zap.Logger, error) {
	cfg := zap.NewProductionConfig()
	cfg.Level = level
	cfg.OutputPaths = []string{"stderr"}
	cfg.ErrorOutputPaths = []string{"stderr"}
	cfg.Sampling = nil
	return cfg.Build()
}

func runWorker(ctx context.Context, args []string) error {
	var c conn
	var cfg faults.Config
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	c.flags(fs)
	fs.StringVar(&cfg.Ledger, "ledger", "", "ledger file the tools append to (required)")
	fs.StringVar(&cfg.GateDir, "gate-dir", "", "directory of gate files (default: the ledger's)")
	fs.BoolVar(&cfg.Hold, "hold", false, "hold every attempt until its context ends")
	stopTimeout := fs.Duration("stop-timeout", worker.DefaultStopTimeout, "how long a graceful stop lets running tools finish before draining them")
	level := zap.NewAtomicLevelAt(zap.InfoLevel)
	fs.TextVar(&level, "log-level", level, "lowest level logged")
	if err := fs.Parse(args); err != nil {
		return err
	}
	logger, err := jsonLogger(level)
	if err != nil {
		return fmt.Errorf("build logger: %w", err)
	}
	reg, err := faults.Registry(cfg)
	if err != nil {
		return err
	}
	sdk, err := c.dial(ctx, logger)
	if err != nil {
		return err
	}
	defer sdk.Close()
	w, err := worker.New(sdk, c.namespace, reg, worker.Options{TaskQueue: c.taskQueue, Logger: logger, StopTimeout: *stopTimeout})
	if err != nil {
		return fmt.Errorf("create worker: %w", err)
	}
	// The agent workflow of the undo scenario runs on the worker it calls.
	w.RegisterWorkflowWithOptions(faults.BookingAgent, workflow.RegisterOptions{Name: faults.BookingAgentName})
	// The inline agent validates its calls in its own workflow code: it runs here, with the
	// worker's registry.
	w.RegisterWorkflowWithOptions(faults.InlineAgent(reg), workflow.RegisterOptions{Name: faults.InlineAgentName})
	if err := w.Start(); err != nil {
		return fmt.Errorf("start worker: %w", err)
	}
	fmt.Printf("ready %d\n", os.Getpid())
	<-ctx.Done()
	w.Stop()
	return nil
}

func runAgent(ctx context.Context, args []string) error {
	var c conn
	var callsPath string
	var concurrency int
	fs := flag.NewFlagSet("agent", flag.ContinueOnError)
	c.flags(fs)
	fs.StringVar(&callsPath, "calls", "", "file with one tool call JSON per line (required)")
	fs.IntVar(&concurrency, "concurrency", 16, "calls in flight at once")
	if err := fs.Parse(args); err != nil {
		return err
	}
	calls, err := readCalls(callsPath)
	if err != nil {
		return err
	}
	logger, err := jsonLogger(zap.NewAtomicLevelAt(zap.WarnLevel))
	if err != nil {
		return fmt.Errorf("build logger: %w", err)
	}
	sdk, err := c.dial(ctx, logger)
	if err != nil {
		return err
	}
	defer sdk.Close()
	cl := tgclient.New(sdk, tgclient.Options{TaskQueue: c.taskQueue, Namespace: c.namespace})

	out := &lineWriter{w: os.Stdout}
	sem := make(chan struct{}, max(concurrency, 1))
	var wg sync.WaitGroup
	for _, call := range calls {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			res, err := cl.Execute(ctx, call)
			out.write(faults.NewAgentLine(call.ID(), res, err))
		})
	}
	wg.Wait()
	return out.err
}

func readCalls(path string) ([]toolcore.ToolCall, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open calls: %w", err)
	}
	defer f.Close()
	var calls []toolcore.ToolCall
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), toolcore.MaxCallBytes+1)
	for sc.Scan() {
		call, err := toolcore.ParseToolCall(sc.Bytes())
		if err != nil {
			return nil, fmt.Errorf("read calls: %w", err)
		}
		calls = append(calls, call)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read calls: %w", err)
	}
	if len(calls) == 0 {
		return nil, errors.New("read calls: no calls")
	}
	return calls, nil
}

// lineWriter writes whole JSON lines from many goroutines.
type lineWriter struct {
	mu  sync.Mutex
	w   io.Writer
	err error
}

func (l *lineWriter) write(v faults.AgentLine) {
	data, err := json.Marshal(v)
	l.mu.Lock()
	defer l.mu.Unlock()
	if err == nil {
		_, err = l.w.Write(append(data, '\n'))
	}
	if err != nil && l.err == nil {
		l.err = fmt.Errorf("write outcome: %w", err)
	}
}
