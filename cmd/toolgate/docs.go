package main

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// cliReferenceCommand is how docs/cli.md is regenerated; TestCLIReferenceIsCurrent names it.
const cliReferenceCommand = "go run -tags toolgate_noserver ./cmd/toolgate docs cli > docs/cli.md"

// newDocsCommand is the hidden `toolgate docs cli`: it renders every command's use, help and
// flags as Markdown, the CLI reference in docs/cli.md, so that reference is the commands' own
// text and cannot drift from it.
func newDocsCommand(a *app) *cobra.Command {
	docs := &cobra.Command{
		Use:    "docs",
		Short:  "Render toolgate's documentation from the commands",
		Hidden: true,
		Args:   cobra.NoArgs,
	}
	docs.AddCommand(&cobra.Command{
		Use:   "cli",
		Short: "Print the CLI reference (docs/cli.md) as Markdown",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// A fresh command tree on a fixed environment: defaults read from the environment
			// (dev's data directory) render the same on every machine.
			root := newRootCommand(&app{streams: a.streams, lookupEnv: docsEnv, logger: a.logger})
			_, err := io.WriteString(a.out, renderCLIReference(root))
			return err
		},
	})
	return docs
}

// renderCLIReference renders root and every available subcommand, depth first in cobra's order.
func renderCLIReference(root *cobra.Command) string {
	for _, c := range availableCommands(root) {
		c.Flags().VisitAll(machineFreeDefault)
		c.PersistentFlags().VisitAll(machineFreeDefault)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# CLI reference\n\n")
	fmt.Fprintf(&b, "<!-- Generated from the commands by `%s`; do not edit.\n", cliReferenceCommand)
	fmt.Fprintf(&b, "     TestCLIReferenceIsCurrent (cmd/toolgate) fails when it differs. -->\n\n")
	fmt.Fprintf(&b, "Every command below also takes the global flags of `toolgate` (logging) and `--help`.\n\n")
	for _, c := range availableCommands(root) {
		if c == root {
			continue
		}
		fmt.Fprintf(&b, "- [`%s`](#%s): %s\n", c.CommandPath(), anchor(c.CommandPath()), c.Short)
	}
	b.WriteString("\n")
	for _, c := range availableCommands(root) {
		renderCommand(&b, c)
	}
	return b.String()
}

func availableCommands(c *cobra.Command) []*cobra.Command {
	out := []*cobra.Command{c}
	for _, sub := range c.Commands() {
		if sub.IsAvailableCommand() {
			out = append(out, availableCommands(sub)...)
		}
	}
	return out
}

func renderCommand(b *bytes.Buffer, c *cobra.Command) {
	fmt.Fprintf(b, "## %s\n\n%s\n\n", c.CommandPath(), c.Short)
	fmt.Fprintf(b, "```\n%s\n```\n\n", c.UseLine())
	if long := strings.TrimSpace(c.Long); long != "" {
		fmt.Fprintf(b, "```text\n%s\n```\n\n", long)
	}
	if ex := strings.TrimRight(c.Example, " \n"); ex != "" {
		fmt.Fprintf(b, "Examples:\n\n```sh\n%s\n```\n\n", ex)
	}
	if flags := c.LocalNonPersistentFlags(); flags.HasAvailableFlags() {
		fmt.Fprintf(b, "Flags:\n\n```text\n%s```\n\n", flags.FlagUsagesWrapped(100))
	}
	if flags := c.PersistentFlags(); flags.HasAvailableFlags() {
		title := "Flags of this command and its subcommands"
		if !c.HasParent() {
			title = "Global flags"
		}
		fmt.Fprintf(b, "%s:\n\n```text\n%s```\n\n", title, flags.FlagUsagesWrapped(100))
	}
}

// docsHome is the home directory the reference is rendered with, shown as ~.
const docsHome = "/home/me"

// docsEnv is the environment the reference is rendered in: a home directory, nothing else.
func docsEnv(key string) (string, bool) {
	if key == "HOME" {
		return docsHome, true
	}
	return "", false
}

// machineFreeDefault writes a default under the home directory as ~/..., as a shell would.
func machineFreeDefault(f *pflag.Flag) {
	if strings.HasPrefix(f.DefValue, docsHome+"/") {
		f.DefValue = "~" + strings.TrimPrefix(f.DefValue, docsHome)
	}
}

// anchor is the GitHub heading anchor of "## <path>".
func anchor(path string) string {
	return strings.ReplaceAll(strings.ToLower(path), " ", "-")
}
