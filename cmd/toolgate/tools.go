package main

import (
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"
)

type toolsOptions struct {
	toolbox toolboxOptions
	json    bool
}

func newToolsCommand(a *app) *cobra.Command {
	var o toolsOptions
	cmd := &cobra.Command{
		Use:   "tools",
		Short: "List the toolbox: name, side-effect class, description",
		Long: `List the tools a toolgate worker serves, with the side-effect class that decides retries
(readOnly and idempotent tools are retried on worker loss and transient errors; unsafe tools run
at most once) and the description the model reads. --json prints an array of
{"name":...,"description":...,"sideEffect":...} in name order.`,
		Example: `  toolgate tools
  toolgate tools --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runTools(cmd.Context(), a, o)
		},
	}
	addToolboxFlags(cmd, &o.toolbox)
	cmd.Flags().BoolVar(&o.json, "json", false, "print a JSON array")
	return cmd
}

// toolJSON is one entry of tools --json.
type toolJSON struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	SideEffect  string `json:"sideEffect"`
}

func runTools(_ context.Context, a *app, o toolsOptions) error {
	reg, err := o.toolbox.registry(nil)
	if err != nil {
		return err
	}
	list := []toolJSON{}
	for _, name := range reg.Names() {
		t, ok := reg.Get(name)
		if !ok {
			continue
		}
		list = append(list, toolJSON{Name: name, Description: t.Description(), SideEffect: t.Options().SideEffect.String()})
	}
	if o.json {
		return writeJSON(a.out, list)
	}
	tw := tabwriter.NewWriter(a.out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSIDE EFFECT\tDESCRIPTION")
	for _, t := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", t.Name, t.SideEffect, oneLine(t.Description, 100))
	}
	return tw.Flush()
}
