package helmcheck

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/internal/testbin"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testbin.Cleanup()
	os.Exit(code)
}

// TestChartSpeaksTheCLI: every flag the chart passes to a toolgate command, and every TOOLGATE_*
// and TEMPORAL_* variable it sets, is one that command's --help names (the toolgate binary of
// this build, $TOOLGATE_BIN): a renamed flag or variable fails here, not in a cluster's crash loop.
func TestChartSpeaksTheCLI(t *testing.T) {
	toolgate, err := testbin.Toolgate()
	require.NoError(t, err)
	help := map[string]string{}
	usage := func(command string) string {
		if _, ok := help[command]; !ok {
			out, err := exec.Command(toolgate, command, "--help").CombinedOutput()
			require.NoError(t, err, "toolgate %s --help: %s", command, out)
			help[command] = string(out)
		}
		return help[command]
	}
	sets, err := filepath.Glob("testdata/*.yaml")
	require.NoError(t, err)
	checked := 0
	for _, set := range append([]string{""}, sets...) {
		rendered, err := render(t, set)
		require.NoError(t, err)
		for name, d := range decode(t, rendered).deployments {
			c := d.Spec.Template.Spec.Containers[0]
			require.NotEmpty(t, c.Args, name)
			text := usage(c.Args[0])
			for _, a := range c.Args[1:] {
				flag, _, _ := strings.Cut(a, "=")
				require.True(t, strings.HasPrefix(flag, "--"), "%s: argument %q", name, a)
				assert.Contains(t, text, "  "+flag+" ", "%s: toolgate %s has no flag %s", name, c.Args[0], flag)
				checked++
			}
			for _, e := range c.Env {
				if strings.HasPrefix(e.Name, "TOOLGATE_") || strings.HasPrefix(e.Name, "TEMPORAL_") {
					assert.Contains(t, text, "[$"+e.Name+"]", "%s: toolgate %s reads no %s", name, c.Args[0], e.Name)
					checked++
				}
			}
		}
	}
	require.NotZero(t, checked)
}
