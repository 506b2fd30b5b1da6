package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/log"
	"go.uber.org/zap"

	"github.com/toolgate/toolgate/internal/logging"
	"github.com/toolgate/toolgate/replay"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

type replayOptions struct {
	toolbox  toolboxOptions
	codecKey string
}

func newReplayCommand(a *app) *cobra.Command {
	var o replayOptions
	cmd := &cobra.Command{
		Use:   "replay FILE...",
		Short: "Replay exported histories against the current workflow code",
		Long: `Replay each workflow history FILE (JSON, as toolgate history, the Temporal CLI or the Web
UI export it) against the ToolCallWorkflow code and toolbox of this binary, and print one line per
file: "PASS FILE" or "FAIL FILE: reason". A failure means this build would make different
decisions than the build that recorded the history (a non-determinism error), so deploying it
would break calls in flight. Replay runs no tool and needs no server.

Histories of encrypted calls replay with the same --codec-key as the worker's (any keyring that
holds the keys they were written with). A history with payloads encrypted with a key this
command lacks fails with one line naming the key ID.

A history recorded by a worker that upserted the search attributes (the namespace had them) is
replayed the same way; this is read from the history itself.

Exit codes: 0 every file passed, 1 at least one failed, 2 usage.`,
		Example: `  toolgate history toolcall-call-add-1 > add.json && toolgate replay add.json
  toolgate replay testdata/histories/*.json`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runReplay(cmd.Context(), a, o, args)
		},
	}
	addToolboxFlags(cmd, &o.toolbox)
	addCodecKeyFlag(cmd, &o.codecKey)
	return cmd
}

func runReplay(_ context.Context, a *app, o replayOptions, files []string) error {
	reg, err := o.toolbox.registry(nil)
	if err != nil {
		return err
	}
	keys, err := loadKeyring(o.codecKey)
	if err != nil {
		return err
	}
	dc := dataConverter(keys)
	sdkLogger := logging.Temporal(a.logger)
	failed := 0
	for _, file := range files {
		if err := replayFile(sdkLogger, reg, dc, file); err != nil {
			failed++
			fmt.Fprintf(a.out, "FAIL %s: %v\n", file, err)
			continue
		}
		fmt.Fprintf(a.out, "PASS %s\n", file)
	}
	if failed > 0 {
		a.logger.Info("replay failed", zap.Int("failed", failed), zap.Int("files", len(files)))
		return &exitError{code: ExitErrorResult}
	}
	return nil
}

// replayFile replays one history file with package replay: toolgate's workflows configured as
// the recording worker's were, under the recorded execution. A history whose tool reg lacks
// fails with replay's one-line *MissingToolError, not the SDK's TMPRL1100 stack trace, and so does
// one with payloads encrypted with a key --codec-key does not give (*MissingKeyError).
func replayFile(logger log.Logger, reg *toolcore.Registry, dc converter.DataConverter, file string) error {
	f, err := os.Open(file)
	if err != nil {
		return fmt.Errorf("open history: %w", err)
	}
	hist, err := client.HistoryFromJSON(f, client.HistoryJSONOptions{})
	_ = f.Close()
	if err != nil {
		return fmt.Errorf("decode history: %w", err)
	}
	if len(hist.Events) == 0 {
		return fmt.Errorf("decode history: no events")
	}
	if name := hist.Events[0].GetWorkflowExecutionStartedEventAttributes().GetWorkflowType().GetName(); name != wire.ToolCallWorkflowName {
		return fmt.Errorf("workflow type %q is not %s", name, wire.ToolCallWorkflowName)
	}
	err = replay.History(hist, replay.Options{Registry: reg, DataConverter: dc, Logger: logger})
	if missing := (*replay.MissingKeyError)(nil); errors.As(err, &missing) {
		return fmt.Errorf("history holds payloads encrypted with key ID %q, which this command lacks: give --codec-key a key file that holds it", missing.KeyID)
	}
	return err
}
