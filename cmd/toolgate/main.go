package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"github.com/toolgate/toolgate/internal/safetext"
)

// commands is the command table: one constructor per subcommand, each in its own file. Adding a
// subcommand is one file and one line here.
func commands() []func(*app) *cobra.Command {
	return []func(*app) *cobra.Command{
		newDevCommand,
		newWorkerCommand,
		newCallCommand,
		newResultCommand,
		newStatusCommand,
		newListCommand,
		newCancelCommand,
		newAnswerCommand,
		newApprovalsCommand,
		newApproveCommand,
		newRejectCommand,
		newHistoryCommand,
		newUndoCommand,
		newReplayCommand,
		newToolsCommand,
		newDriftCommand,
		newDeployCommand,
		newLimitsCommand,
		newPolicyCommand,
		newBenchCommand,
		newCodecServerCommand,
		newCodecCommand,
		newCredentialsCommand,
		newSandboxCommand,
		newMCPCommand,
		newDocsCommand, // hidden: docs/cli.md
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		// After the first signal, restore the default handling: a second Ctrl-C kills at once.
		<-ctx.Done()
		stop()
	}()
	code := run(ctx, os.Args[1:], streams{in: os.Stdin, out: os.Stdout, err: os.Stderr}, os.LookupEnv)
	stop()
	os.Exit(code)
}

// streams are the process's standard streams; tests substitute buffers.
type streams struct {
	in  io.Reader
	out io.Writer
	err io.Writer
}

// app is what every subcommand shares: the streams, the environment, and the logger built from the
// global flags before any subcommand runs.
type app struct {
	streams
	lookupEnv func(string) (string, bool)
	logOpts   logOptions
	logger    *zap.Logger
	// started is set when a subcommand's RunE begins: an error before it is a usage error.
	started bool
}

// run executes one command line and returns the process exit code.
func run(ctx context.Context, args []string, s streams, lookupEnv func(string) (string, bool)) int {
	a := &app{streams: s, lookupEnv: lookupEnv, logger: zap.NewNop()}
	root := newRootCommand(a)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	defer func() { _ = a.logger.Sync() }()
	if err == nil {
		return ExitOK
	}
	if !a.started {
		// Flags, arguments, environment or an unknown command: cobra has not run anything.
		fmt.Fprintf(s.err, "Error: %s\n", safetext.String(err.Error()))
		fmt.Fprintf(s.err, "Run '%s --help' for usage.\n", commandPathFor(root, args))
		return ExitUsage
	}
	code, msg := classify(err)
	if msg == "" {
		return code
	}
	jsonLogs := a.logOpts.format == "json"
	if !jsonLogs {
		msg += ": " + consoleText(err)
	}
	if code == ExitCanceled {
		a.logger.Warn(msg, errorFields(err, jsonLogs)...) // an outcome someone chose, not a fault
	} else {
		a.logger.Error(msg, errorFields(err, jsonLogs)...)
	}
	return code
}

// commandPathFor names the subcommand args select, for the usage hint.
func commandPathFor(root *cobra.Command, args []string) string {
	cmd, _, err := root.Find(args)
	if err != nil || cmd == nil {
		return root.Name()
	}
	return cmd.CommandPath()
}

func newRootCommand(a *app) *cobra.Command {
	root := &cobra.Command{
		Use:   "toolgate",
		Short: "A durable tool executor for AI agents on Temporal",
		Long:  rootLong,
		// Errors and usage are printed by run, once, with the right exit code.
		SilenceErrors: true,
		SilenceUsage:  true,
		Args:          cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cmd.SetOut(a.err)
			_ = cmd.Help()
			return fmt.Errorf("missing subcommand")
		},
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			if err := applyEnv(cmd, a.lookupEnv); err != nil {
				return err
			}
			if a.logOpts.level == "" {
				a.logOpts.level = defaultLogLevel(cmd)
			}
			logger, err := newLogger(a.logOpts, a.err)
			if err != nil {
				return err
			}
			a.logger = logger
			return nil
		},
	}
	root.SetOut(a.out)
	root.SetErr(a.err)
	root.SetIn(a.in)
	root.CompletionOptions.HiddenDefaultCmd = true
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return err })
	addLogFlags(root, &a.logOpts)
	for _, newCmd := range commands() {
		cmd := newCmd(a)
		markStart(cmd, &a.started)
		root.AddCommand(cmd)
	}
	return root
}

// markStart wraps the RunE of cmd and its subcommands so that *started is set when one begins.
func markStart(cmd *cobra.Command, started *bool) {
	if runE := cmd.RunE; runE != nil {
		cmd.RunE = func(c *cobra.Command, args []string) error {
			*started = true
			return runE(c, args)
		}
	}
	for _, sub := range cmd.Commands() {
		markStart(sub, started)
	}
}

const rootLong = `toolgate turns a tool call from a language model into exactly one durable Temporal
workflow: validated before any effect, run in a heartbeat-linked activity, recorded as one
bounded tool-result message.

Start here:
  toolgate dev                               # Temporal server, Web UI and a worker, on loopback
  toolgate call add '{"left":20,"right":22}'  # in another terminal

Environment and flags follow the Temporal CLI: TEMPORAL_ADDRESS (--address),
TEMPORAL_NAMESPACE (--namespace), TEMPORAL_API_KEY (--api-key), TEMPORAL_TLS* (--tls*).
A flag wins over its environment variable, which wins over the default.

Exit codes:
  0  success (call: the result has isError false)
  1  the call finished with an error result (isError true); replay: a history failed
  2  bad input or usage: flags, arguments, a malformed tool call, an unknown or conflicting ID
  3  fatal: the tool failed with a NonRecoverableToolError (stop the agent run)
  4  canceled: the call was canceled (Ctrl-C on call, toolgate cancel, the Web UI)
  5  any other failure: connection, server, timeout, termination`
