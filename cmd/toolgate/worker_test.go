package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// --mcp-env PREFIX=NAME names a variable for one mount: never a value, never an unknown mount.
func TestMountEnv(t *testing.T) {
	vars := map[string]string{"GITHUB_TOKEN": "t", "PATH": "/bin"}
	lookup := func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
	mounts := []string{"gh=github-mcp-server stdio", "fs=fs-server"}
	tests := []struct {
		name    string
		give    []string
		wantEnv map[string][]string
		wantErr string
	}{
		{name: "none", wantEnv: map[string][]string{"gh": nil, "fs": nil}},
		{name: "one mount", give: []string{"gh=GITHUB_TOKEN"}, wantEnv: map[string][]string{"gh": {"GITHUB_TOKEN"}, "fs": nil}},
		{name: "a value is refused", give: []string{"gh=GITHUB_TOKEN=secret"}, wantErr: "never its value"},
		{name: "no name", give: []string{"gh="}, wantErr: "want PREFIX=NAME"},
		{name: "unknown mount", give: []string{"web=TOKEN"}, wantErr: `no --mcp mount has prefix "web"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := mountEnv(tt.give, mounts, lookup)
			if tt.wantErr != "" {
				assert.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			for prefix, want := range tt.wantEnv {
				assert.Equal(t, want, got[prefix].Env, prefix)
				require.NotNil(t, got[prefix].LookupEnv, prefix)
			}
		})
	}
}
