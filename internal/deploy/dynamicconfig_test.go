package deploy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

// dynamicConfigValue is one value of a key in a Temporal dynamic config file.
type dynamicConfigValue struct {
	Value       any            `yaml:"value"`
	Constraints map[string]any `yaml:"constraints"`
}

// loadComposeDynamicConfig reads the dynamic config file the compose file mounts where the
// temporal service's DYNAMIC_CONFIG_FILE_PATH points, keyed by lower-case key (the server's
// keys are case-insensitive).
func loadComposeDynamicConfig(t *testing.T) map[string][]dynamicConfigValue {
	t.Helper()
	temporal := loadCompose(t).Services["temporal"]
	target := temporal.Environment["DYNAMIC_CONFIG_FILE_PATH"]
	require.NotEmpty(t, target, "the temporal service names its dynamic config file")
	var source string
	for _, v := range temporal.Volumes {
		parts := strings.Split(v, ":")
		if len(parts) >= 2 && parts[1] == target {
			source = parts[0]
		}
	}
	require.NotEmpty(t, source, "the temporal service mounts %s", target)
	data, err := os.ReadFile(filepath.Join(repoRoot(t), filepath.FromSlash(source)))
	require.NoError(t, err)
	var raw map[string][]dynamicConfigValue
	require.NoError(t, yaml.Unmarshal(data, &raw))
	out := make(map[string][]dynamicConfigValue, len(raw))
	for k, v := range raw {
		out[strings.ToLower(k)] = v
	}
	return out
}

// TestComposeDynamicConfigPushesCancellation: the compose file's server pushes an activity's
// cancellation to its worker (issue 27 item 4, docs/operations.md): the namespace reports the
// worker-commands capability (frontend.WorkerCommandsEnabled, with worker heartbeats on) and
// history sends cancel commands (system.enableCancelActivityWorkerCommand), for every namespace.
func TestComposeDynamicConfigPushesCancellation(t *testing.T) {
	dc := loadComposeDynamicConfig(t)
	for _, key := range []string{
		"frontend.workercommandsenabled",
		"frontend.workerheartbeatsenabled",
		"system.enablecancelactivityworkercommand",
	} {
		values := dc[key]
		require.Len(t, values, 1, "%s is set once", key)
		assert.Equal(t, true, values[0].Value, key)
		assert.Empty(t, values[0].Constraints, "%s holds for every namespace", key)
	}
}
