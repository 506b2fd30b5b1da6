package wire

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The package documentation's section list names every file of the package, and only those.
func TestDocListsEveryFile(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	require.NoError(t, err)
	var listed []string
	for _, m := range regexp.MustCompile(`(?m)^//   - ([a-z_]+\.go):`).FindAllStringSubmatch(string(doc), -1) {
		listed = append(listed, m[1])
	}
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	var want []string
	for _, f := range files {
		if f != "doc.go" && !strings.HasSuffix(f, "_test.go") {
			want = append(want, f)
		}
	}
	require.NotEmpty(t, want)
	sort.Strings(listed)
	assert.Equal(t, want, listed, "wire/doc.go's section list must name every file of package wire")
}
