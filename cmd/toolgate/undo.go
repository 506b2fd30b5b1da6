package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	"go.uber.org/zap"

	tgclient "github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/internal/safetext"
	"github.com/toolgate/toolgate/wire"
)

type undoOptions struct {
	conn      connOptions
	taskQueue string
	json      bool
}

func newUndoCommand(a *app) *cobra.Command {
	var o undoOptions
	cmd := &cobra.Command{
		Use:   "undo RUN",
		Short: "Undo the effects of a closed agent run, last completed first",
		Long: `Undo the effects of the tool calls of a closed run (an agent workflow's ID): every call
that completed (its child ToolCallWorkflows, attached calls and inline ExecuteTool activities, read
from the run's history) is compensated in reverse order of completion by the tool's Compensate, each
a durable, retried step with its own idempotency key. Tools without a Compensate are skipped. A
call whose outcome is unknown is reconciled first and compensated only when its effect is found.
The first compensation that fails for good stops the undo; the effects it leaves are listed.

Each compensation runs on the task queue its call's tool ran on, as the run recorded it, and the
undo itself on the queue of the run's calls (else the run's own), so no --task-queue is needed;
a failure names the queue. The undo is the workflow "undo/RUN"; run the command again after a
failed or partial undo (a worker deployed, a compensation fixed): a new attempt, "undo/RUN/attempt-2"
and so on, undoes only what the earlier ones left. An attempt still running is attached to, and
one that compensated everything is printed again: no effect is compensated twice.

Output: one line per effect of the run, "<status> <tool> <call ID> <idempotency key>", in undo
order, as its last attempt left it (status compensated, skipped, notFound, unresolved, failed or
remaining); --json prints the result object.

Exit codes: 0 every effect undone or skipped, 1 some effects may remain (failed, remaining,
unresolved), 2 no such run or the run has not closed, 5 other failure.`,
		Example: `  toolgate undo agent-order-4711
  toolgate undo agent-order-4711 --json | jq '.steps[] | select(.status != "compensated")'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runUndo(cmd.Context(), a, o, args[0])
		},
	}
	addConnFlags(cmd, &o.conn)
	fs := cmd.Flags()
	fs.StringVar(&o.taskQueue, "task-queue", "", "task queue the undo workflow runs on (default the run's: its calls' queue, else its own); each compensation runs where its call's tool ran")
	bindEnv(fs, "task-queue", "TOOLGATE_TASK_QUEUE")
	cmd.Flags().BoolVar(&o.json, "json", false, "print the undo's result as JSON")
	return cmd
}

func runUndo(ctx context.Context, a *app, o undoOptions, run string) error {
	c, err := o.conn.dial(ctx, a.logger)
	if err != nil {
		return err
	}
	defer c.Close()
	logger := a.logger.With(zap.String("workflowId", run))
	res, err := o.conn.toolgate(c, "", "").UndoWith(ctx, run, tgclient.UndoOptions{TaskQueue: o.taskQueue})
	switch {
	case errors.Is(err, wire.ErrNotFound):
		return badInput(fmt.Errorf("undo %s: no such run: %w", run, err))
	case errors.Is(err, tgclient.ErrRunNotClosed):
		return badInput(err)
	case err != nil:
		return err
	}
	if o.json {
		data, err := json.Marshal(res)
		if err != nil {
			return fmt.Errorf("encode the undo's result: %w", err)
		}
		data, _ = safetext.JSON(data) // tool names, IDs and messages come from the run
		if _, err := a.out.Write(append(data, '\n')); err != nil {
			return err
		}
	} else {
		for _, s := range res.Steps {
			line := fmt.Sprintf("%s %s %s %s", s.Status, s.Effect.ToolName, s.Effect.ToolCallID, s.Effect.IdempotencyKey)
			if s.Message != "" {
				line += ": " + s.Message
			}
			if _, err := fmt.Fprintln(a.out, safetext.String(line)); err != nil {
				return err
			}
		}
	}
	if remain := res.Remaining(); len(remain) > 0 {
		logger.Warn("effects of the run may remain", zap.Int("remaining", len(remain)))
		return &exitError{code: ExitErrorResult}
	}
	logger.Info("run undone", zap.Int("compensated", res.Count(wire.UndoCompensated)), zap.Int("steps", len(res.Steps)))
	return nil
}
