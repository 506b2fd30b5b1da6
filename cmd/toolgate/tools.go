package main

import (
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/tooldefs"
)

type toolsOptions struct {
	toolbox   toolboxOptions
	conn      connOptions
	taskQueue string
	remote    bool
	json      bool
	format    string
	strict    bool
}

func newToolsCommand(a *app) *cobra.Command {
	var o toolsOptions
	cmd := &cobra.Command{
		Use:   "tools",
		Short: "List the tools: name, side-effect class, description, schemas",
		Long: `List the tools a toolgate worker serves, with the side-effect class that decides retries
(readOnly and idempotent tools are retried on worker loss and transient errors; unsafe tools run
at most once) and the description the model reads.

By default the list is this build's toolbox (with --root and --allow-host as the worker would
use them). --remote asks the workers polling --task-queue on the Temporal server instead: their
real tool set, whatever build they run.

--json prints an array of {"name","description","sideEffect","inputSchema","outputSchema"?,
"definitionHash"} in name order. --format prints the list the way agents hand it to a model:
  mcp        MCP Tool objects: name, description, inputSchema, outputSchema, annotations
             (readOnlyHint, destructiveHint, idempotentHint from the side-effect class)
  openai     OpenAI function tools: {"type":"function","function":{"name","description","parameters"}}
             (--strict adds "strict":true, and fails for schemas strict mode refuses)
  anthropic  Anthropic tools: {"name","description","input_schema"}`,
		Example: `  toolgate tools
  toolgate tools --json
  toolgate tools --format openai
  toolgate tools --format mcp --remote --address 127.0.0.1:7233`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runTools(cmd.Context(), a, o)
		},
	}
	addToolboxFlags(cmd, &o.toolbox)
	addConnFlags(cmd, &o.conn)
	addTaskQueueFlag(cmd, &o.taskQueue)
	fs := cmd.Flags()
	fs.BoolVar(&o.json, "json", false, "print a JSON array of tool infos")
	fs.StringVar(&o.format, "format", "", "print for a model provider: mcp, openai or anthropic")
	fs.BoolVar(&o.strict, "strict", false, "with --format openai: mark the tools strict (fails for schemas strict mode refuses)")
	fs.BoolVar(&o.remote, "remote", false, "list the tools of the workers on --task-queue, not this build's toolbox")
	return cmd
}

func runTools(ctx context.Context, a *app, o toolsOptions) error {
	if o.json && o.format != "" {
		return badInput(fmt.Errorf("--json and --format exclude each other"))
	}
	if o.strict && o.format != string(tooldefs.FormatOpenAI) {
		return badInput(fmt.Errorf("--strict needs --format openai"))
	}
	infos, err := toolInfos(ctx, a, o)
	if err != nil {
		return err
	}
	switch {
	case o.json:
		return writeJSON(a.out, infos)
	case o.format != "":
		out, err := tooldefs.Render(infos, tooldefs.Format(o.format), tooldefs.OpenAIOptions{Strict: o.strict})
		if err != nil {
			return badInput(err)
		}
		return writeJSON(a.out, out)
	}
	tw := tabwriter.NewWriter(a.out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSIDE EFFECT\tDESCRIPTION")
	for _, t := range infos {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", t.Name, sideEffectColumn(t), oneLine(t.Description, 100))
	}
	return tw.Flush()
}

// toolInfos returns the local toolbox's tools, or with --remote the worker catalog.
func toolInfos(ctx context.Context, a *app, o toolsOptions) ([]toolcore.ToolInfo, error) {
	if !o.remote {
		reg, err := o.toolbox.registry(nil)
		if err != nil {
			return nil, err
		}
		return reg.Infos(), nil
	}
	c, err := o.conn.dial(ctx, a.logger)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return o.conn.toolgate(c, o.taskQueue, "").ListTools(ctx)
}

// sideEffectColumn is the class, "(assumed)" when the tool did not declare it (a mounted MCP tool
// without annotations: unsafe by the MCP defaults), and "+approval" when every call waits for a
// human decision.
func sideEffectColumn(t toolcore.ToolInfo) string {
	col := t.SideEffect
	if t.SideEffectAssumed {
		col += " (assumed)"
	}
	if t.RequireApproval {
		col += " +approval"
	}
	return col
}
