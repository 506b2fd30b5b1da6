package cluster_test

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/server/common/dynamicconfig"

	"github.com/toolgate/toolgate/cmd/toolgate/internal/cluster"
)

// TestComposeFilesAreGenerated: docker-compose.yml and its dynamic config are what
// cluster.ComposeFiles renders from NodeConfig and DynamicConfig, byte for byte, so the compose
// file cannot drift from the configuration the cluster tests run.
func TestComposeFilesAreGenerated(t *testing.T) {
	files, err := cluster.ComposeFiles()
	require.NoError(t, err)
	require.Len(t, files, 2)
	for path, want := range files {
		got, err := os.ReadFile(filepath.Join("..", "..", "..", "..", filepath.FromSlash(path)))
		require.NoError(t, err)
		assert.Equal(t, string(want), string(got), "%s is out of date: run `go generate ./cmd/toolgate/internal/cluster`", path)
	}
}

// TestComposeDynamicConfigLoads: the server's own loader reads the generated dynamic config
// without errors or warnings, with every value of cluster.DynamicConfig.
func TestComposeDynamicConfigLoads(t *testing.T) {
	files, err := cluster.ComposeFiles()
	require.NoError(t, err)
	loaded := dynamicconfig.LoadYamlFile(files[cluster.ComposeDynamicConfigPath])
	require.NoError(t, loaded.Err())
	require.Empty(t, loaded.Warnings)
	want := cluster.DynamicConfig()
	require.Len(t, loaded.Map, len(want))
	for key, value := range want {
		got := loaded.Map[key]
		require.Len(t, got, 1, "%s", key)
		if d, ok := value.(time.Duration); ok {
			parsed, err := time.ParseDuration(got[0].Value.(string))
			require.NoError(t, err, "%s", key)
			assert.Equal(t, d, parsed, "%s", key)
			continue
		}
		assert.Equal(t, value, got[0].Value, "%s", key)
	}
}

// TestComposeServerIsTheTestedOne: the compose file's temporalio/server and admin-tools images are
// the version of the server module the cluster tests run (go.temporal.io/server in
// cmd/toolgate/go.mod), so the compose file's server has what those tests rely on (worker
// commands since v1.32).
func TestComposeServerIsTheTestedOne(t *testing.T) {
	mod, err := os.ReadFile(filepath.Join("..", "..", "go.mod"))
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^\s*go\.temporal\.io/server v(\S+)`).FindSubmatch(mod)
	require.NotNil(t, m, "cmd/toolgate/go.mod requires go.temporal.io/server")
	assert.Equal(t, string(m[1]), cluster.ComposeServerVersion)
	files, err := cluster.ComposeFiles()
	require.NoError(t, err)
	compose := string(files[cluster.ComposePath])
	assert.Contains(t, compose, "image: temporalio/server:"+cluster.ComposeServerVersion+"\n")
	assert.Contains(t, compose, "image: temporalio/admin-tools:"+cluster.ComposeServerVersion+"\n")
	assert.NotContains(t, compose, "auto-setup", "the auto-setup image ends at 1.29, before worker commands")
}
