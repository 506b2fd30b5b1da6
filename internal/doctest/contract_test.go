package doctest

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testRef is a test named in the documentation: `pkg.TestName` (or FuzzName, BenchmarkName).
var testRef = regexp.MustCompile("`([a-z][a-z0-9]*)\\.((?:Test|Fuzz|Benchmark)[A-Za-z0-9_]*)`")

// Every rule of docs/contract.md names the test that proves it; a renamed or deleted test must
// not leave a rule pointing at nothing. pkg is the package's name, which is the last element of
// its directory here.
func TestContractNamesExistingTests(t *testing.T) {
	root := repoRoot(t)
	data, err := os.ReadFile(filepath.Join(root, "docs", "contract.md"))
	require.NoError(t, err)
	refs := testRef.FindAllStringSubmatch(string(data), -1)
	require.NotEmpty(t, refs, "docs/contract.md names its tests as `package.TestName`")

	funcs := testFuncsByPackage(t, root)
	for _, ref := range refs {
		pkg, name := ref[1], ref[2]
		assert.Contains(t, funcs[pkg], name, "docs/contract.md names %s.%s, which does not exist", pkg, name)
	}
}

var testFunc = regexp.MustCompile(`(?m)^func ((?:Test|Fuzz|Benchmark)[A-Za-z0-9_]*)\(`)

// testFuncsByPackage maps a directory's last element to the test functions in its _test.go files.
func testFuncsByPackage(t *testing.T, root string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules") && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		pkg := filepath.Base(filepath.Dir(path))
		for _, m := range testFunc.FindAllStringSubmatch(string(src), -1) {
			out[pkg] = append(out[pkg], m[1])
		}
		return nil
	})
	require.NoError(t, err)
	return out
}
