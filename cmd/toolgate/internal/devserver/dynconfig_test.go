package devserver

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
)

func TestParseDynamicConfigValue(t *testing.T) {
	for _, tc := range []struct {
		in    string
		key   string
		value any
	}{
		{`history.hostLevelCacheMaxSize=256`, "history.hostLevelCacheMaxSize", float64(256)},
		{`history.longPollExpirationInterval="5s"`, "history.longPollExpirationInterval", "5s"},
		{` system.enableEagerWorkflowStart = false`, "system.enableEagerWorkflowStart", false},
	} {
		key, value, err := ParseDynamicConfigValue(tc.in)
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.key, key)
		assert.Equal(t, tc.value, value)
	}
	for in, want := range map[string]string{
		`history.hostLevelCacheMaxSize`:         "want KEY=VALUE",
		`=1`:                                    "want KEY=VALUE",
		`history.longPollExpirationInterval=5s`: "strings need quotes",
		`history.cacheMaxSize=1`:                `unregistered key "history.cachemaxsize"`,
		`history.hostLevelCacheMaxSize="many"`:  "validation failed",
	} {
		_, _, err := ParseDynamicConfigValue(in)
		require.Error(t, err, in)
		assert.Contains(t, err.Error(), want, in)
	}
	_, err := Start(context.Background(), Options{DynamicConfig: map[string]any{"no.such.setting": 1}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `unregistered key "no.such.setting"`)
}

// An override reaches the running server: with a 100-byte blob limit (the server checks it
// once a blob passes the warning limit), a start with a larger input is refused.
func TestDynamicConfigOverrideApplies(t *testing.T) {
	srv := start(t, Options{DynamicConfig: map[string]any{"limit.blobSize.warn": 50, "limit.blobSize.error": 100}})
	c := dial(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	_, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "big-input", TaskQueue: "none"},
		"AnyWorkflow", strings.Repeat("x", 200))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "exceeds limit")
	_, err = c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "small-input", TaskQueue: "none"}, "AnyWorkflow", "x")
	require.NoError(t, err)
}
