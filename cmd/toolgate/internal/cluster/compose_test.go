package cluster_test

import (
	"os"
	"path/filepath"
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
