package doctest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// repoRoot is the repository root, two levels above this package.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	return root
}

// documents returns README.md and docs/*.md, relative to root.
func documents(t *testing.T, root string) []string {
	t.Helper()
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	require.NoError(t, err)
	files := []string{"README.md"}
	for _, d := range docs {
		rel, err := filepath.Rel(root, d)
		require.NoError(t, err)
		files = append(files, rel)
	}
	return files
}

// TestDocumentationSnippetsCompile builds every ```go block of README.md and docs/*.md from a
// module outside this one, as a user would.
func TestDocumentationSnippetsCompile(t *testing.T) {
	root := repoRoot(t)
	var all []Snippet
	for _, f := range documents(t, root) {
		data, err := os.ReadFile(filepath.Join(root, f))
		require.NoError(t, err)
		snippets, err := Extract(f, string(data))
		require.NoError(t, err)
		all = append(all, snippets...)
	}
	require.NotEmpty(t, all, "README.md has Go snippets; finding none means the extraction broke")
	for _, s := range all {
		t.Logf("%s:%d (file: %v, path %q)", s.File, s.Line, s.IsFile(), s.Path())
		// A newcomer pastes a snippet into a file: it must be one (a package clause, imports,
		// declarations), never a fragment with a top-level `return err`.
		assert.True(t, s.IsFile(), "%s:%d is a fragment: make it a complete Go file", s.File, s.Line)
	}
	require.NoError(t, Build(context.Background(), root, t.TempDir(), all))
}

// A snippet that does not compile fails the build, and the error names its Markdown line.
func TestBuildFailsOnABrokenSnippet(t *testing.T) {
	broken := []Snippet{{File: "BROKEN.md", Line: 40, Code: "import \"fmt\"\n\nfmt.Println(undefinedThing)\n"}}

	err := Build(context.Background(), repoRoot(t), t.TempDir(), broken)

	require.Error(t, err)
	assert.Contains(t, err.Error(), "BROKEN.md:42")
	assert.Contains(t, err.Error(), "undefinedThing")
}

// Snippets naming files of one directory are one package: a walkthrough's files may use each
// other's declarations, a _test.go file included; another document's are apart.
func TestBuildJoinsTheFilesOfAWalkthrough(t *testing.T) {
	snippets := []Snippet{
		{File: "A.md", Line: 3, Code: "// tools.go\npackage main\n\nconst queue = \"q\"\n"},
		{File: "A.md", Line: 9, Code: "// main.go\npackage main\n\nfunc main() { _ = queue; _ = helper() }\n"},
		{File: "A.md", Line: 15, Code: "// main_test.go\npackage main\n\nimport \"testing\"\n\nfunc helper() string { return queue }\n\nfunc TestX(t *testing.T) {}\n"},
		{File: "B.md", Line: 3, Code: "// main.go\npackage main\n\nfunc main() {}\n"},
	}
	require.NoError(t, Build(context.Background(), repoRoot(t), t.TempDir(), snippets))

	twice := []Snippet{snippets[1], snippets[1]}
	err := Build(context.Background(), repoRoot(t), t.TempDir(), twice)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "names main.go too")
}

func TestSnippetPath(t *testing.T) {
	tests := []struct {
		give, want string
	}{
		{give: "// agent.go\npackage main\n", want: "agent.go"},
		{give: "// weather/replay_test.go\npackage weather\n", want: "weather/replay_test.go"},
		{give: "// Package agent runs agents.\npackage agent\n", want: ""},
		{give: "package main\n", want: ""},
		{give: "// main.go\nx := 1\n", want: ""}, // a fragment is never a file
	}
	for _, tt := range tests {
		t.Run(tt.give, func(t *testing.T) {
			assert.Equal(t, tt.want, Snippet{File: "A.md", Line: 1, Code: tt.give}.Path())
		})
	}
}

func TestExtract(t *testing.T) {
	md := "# t\n\n```go\npackage main\n```\n\n    ```go\n    indented\n\n```sh\nls\n```\n\n```go\nx := 1\n_ = x\n```\n"

	got, err := Extract("A.md", md)

	require.NoError(t, err)
	assert.Equal(t, []Snippet{
		{File: "A.md", Line: 4, Code: "package main\n"},
		{File: "A.md", Line: 15, Code: "x := 1\n_ = x\n"},
	}, got)
}

func TestExtractRefusesAnUnclosedBlock(t *testing.T) {
	_, err := Extract("A.md", "text\n```go\nx := 1\n")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "A.md:2")
}

func TestSource(t *testing.T) {
	tests := []struct {
		name string
		give string
		want string
	}{
		{
			name: "a complete library file is renamed to the build's package",
			give: "// Package agent.\npackage agent\n\nfunc f() {}\n",
			want: "\npackage snippet\n//line A.md:12\n\nfunc f() {}\n",
		},
		{
			name: "package main is compiled, not linked",
			give: "package main\n\nfunc main() {}\n",
			want: "package snippet\n//line A.md:11\n\nfunc main() {}\n",
		},
		{
			name: "a fragment's imports go to the top, the rest into a function",
			give: "import (\n\t\"fmt\"\n)\n\nfmt.Println(1)\n",
			want: "package snippet\n\n//line A.md:10\nimport (\n\t\"fmt\"\n)\n\nfunc fragment() (err error) {\n//line A.md:13\n\nfmt.Println(1)\n\treturn\n}\n",
		},
		{
			name: "a fragment without imports",
			give: "return nil\n",
			want: "package snippet\n\n\nfunc fragment() (err error) {\n//line A.md:10\nreturn nil\n\treturn\n}\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Snippet{File: "A.md", Line: 10, Code: tt.give}.Source("snippet")
			assert.Equal(t, tt.want, got)
			assert.False(t, strings.Contains(got, "\n\n\n\n"), "no runaway blank lines")
		})
	}
}
