package doctest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWalkthroughProgramsQuietTheSDKLogger: the programs of README.md and docs/agents.md that
// dial Temporal give the SDK a logger: without one, the SDK's default logger prints its DEBUG
// lines on every run of a newcomer's first program.
func TestWalkthroughProgramsQuietTheSDKLogger(t *testing.T) {
	root := repoRoot(t)
	dials := 0
	for _, f := range []string{"README.md", filepath.Join("docs", "agents.md")} {
		data, err := os.ReadFile(filepath.Join(root, f))
		require.NoError(t, err)
		snippets, err := Extract(f, string(data))
		require.NoError(t, err)
		for _, s := range snippets {
			file, err := parser.ParseFile(token.NewFileSet(), s.File, s.Code, 0)
			if err != nil {
				continue // a fragment: TestDocumentationSnippetsCompile judges it
			}
			sdkClient := ""
			for _, imp := range file.Imports {
				if path, _ := strconv.Unquote(imp.Path.Value); path == "go.temporal.io/sdk/client" {
					sdkClient = "client"
					if imp.Name != nil {
						sdkClient = imp.Name.Name
					}
				}
			}
			ast.Inspect(file, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok || !isSelector(call.Fun, sdkClient, "Dial") || len(call.Args) != 1 {
					return true
				}
				dials++
				lit, ok := call.Args[0].(*ast.CompositeLit)
				require.True(t, ok, "%s:%d: Dial's options are a literal", s.File, s.Line)
				hasLogger := false
				for _, el := range lit.Elts {
					if kv, ok := el.(*ast.KeyValueExpr); ok {
						if key, ok := kv.Key.(*ast.Ident); ok && key.Name == "Logger" {
							hasLogger = true
						}
					}
				}
				assert.True(t, hasLogger, "%s:%d: the program dials without a Logger: the SDK prints DEBUG lines", s.File, s.Line)
				return true
			})
		}
	}
	assert.Positive(t, dials, "the walkthroughs dial Temporal; finding no Dial means the search broke")
}

// isSelector reports whether e is pkg.name.
func isSelector(e ast.Expr, pkg, name string) bool {
	sel, ok := e.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != name {
		return false
	}
	id, ok := sel.X.(*ast.Ident)
	return ok && pkg != "" && id.Name == pkg
}

// TestDocsDoNotSayGoDocShowsExamples: `go doc` prints no Example functions, so no page says it
// does (pkg.go.dev and go test show them).
func TestDocsDoNotSayGoDocShowsExamples(t *testing.T) {
	root := repoRoot(t)
	claim := regexp.MustCompile("`go doc[^`]*`[^.`]*\\bExamples?\\b")
	for _, f := range documents(t, root) {
		data, err := os.ReadFile(filepath.Join(root, f))
		require.NoError(t, err)
		assert.Empty(t, claim.FindString(string(data)), "%s says go doc shows Examples", f)
	}
}
