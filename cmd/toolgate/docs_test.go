package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// docs/cli.md is what the commands render: a changed flag, help text or command fails here
// until the reference is regenerated.
func TestCLIReferenceIsCurrent(t *testing.T) {
	code, stdout, stderr := runIn([]string{"docs", "cli"}, nil, "")
	require.Equal(t, ExitOK, code, stderr)
	committed, err := os.ReadFile(filepath.Join("..", "..", "docs", "cli.md"))
	require.NoError(t, err)
	assert.True(t, string(committed) == stdout,
		"docs/cli.md differs from what the commands render; regenerate it at the repository root with\n\t%s", cliReferenceCommand)
	for _, want := range []string{"## toolgate call", "## toolgate limits set", "--task-queue", "Exit codes:"} {
		assert.Contains(t, stdout, want)
	}
	assert.NotContains(t, stdout, "## toolgate docs", "the generator is hidden")
	if home, err := os.UserHomeDir(); err == nil && home != "/" {
		assert.NotContains(t, stdout, home+"/", "the reference names no path of this machine")
	}
}

// docListEntry is a line of doc.go's command list: "//\ttoolgate NAME ...".
var docListEntry = regexp.MustCompile(`(?m)^//\ttoolgate ([a-z-]+)`)

// cmd/toolgate/doc.go lists every command of the command table, and nothing else.
func TestDocListsEveryCommand(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	require.NoError(t, err)
	var listed []string
	for _, m := range docListEntry.FindAllStringSubmatch(string(doc), -1) {
		listed = append(listed, m[1])
	}
	var commands []string
	a := &app{streams: streams{in: strings.NewReader(""), out: &bytes.Buffer{}, err: &bytes.Buffer{}}, lookupEnv: func(string) (string, bool) { return "", false }}
	for _, c := range newRootCommand(a).Commands() {
		if c.IsAvailableCommand() {
			commands = append(commands, c.Name())
		}
	}
	require.NotEmpty(t, commands)
	sort.Strings(listed)
	sort.Strings(commands)
	assert.Equal(t, commands, listed, "cmd/toolgate/doc.go's command list must name every command of main.go's table")
}
