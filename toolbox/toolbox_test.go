package toolbox

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/toolcore"
)

func TestToolsSelection(t *testing.T) {
	root := t.TempDir()
	tests := []struct {
		name string
		give Config
		want []string
	}{
		{"zero config", Config{}, []string{"add", "echo", "http_get", "sleep"}},
		{"no http", Config{DisableHTTP: true}, []string{"add", "echo", "sleep"}},
		{"with root", Config{Root: root}, []string{"add", "echo", "http_get", "list_dir", "read_file", "sleep", "write_file"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg := newTestRegistry(t, tt.give)
			assert.Equal(t, tt.want, reg.Names())
			for _, name := range reg.Names() {
				tool, ok := reg.Get(name)
				require.True(t, ok)
				if name == NameWriteFile {
					assert.Equal(t, toolcore.Unsafe, tool.Options().SideEffect, name)
					assert.True(t, tool.Options().RequireApproval, name)
				} else {
					assert.Equal(t, toolcore.ReadOnly, tool.Options().SideEffect, name)
				}
				assert.NotEmpty(t, tool.Description(), name)
			}
		})
	}
}

func TestConfigErrors(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	tests := []struct {
		name string
		give Config
		want string
	}{
		{"root missing", Config{Root: filepath.Join(dir, "missing")}, "no such file or directory"},
		{"root is a file", Config{Root: file}, "is not a directory"},
		{"negative bytes", Config{HTTPMaxBytes: -1}, "must not be negative"},
		{"empty allow entry", Config{AllowHosts: []string{" "}}, "empty entry"},
		{"bad port", Config{AllowHosts: []string{"example.com:0"}}, `port "0" is not between 1 and 65535`},
		{"bad prefix", Config{AllowHosts: []string{"10.0.0.0/33"}}, `parse allowed host "10.0.0.0/33"`},
		{"bad name", Config{AllowHosts: []string{"exa mple.com"}}, "is not a valid DNS name"},
		{"mapped prefix", Config{AllowHosts: []string{"::ffff:10.0.0.0/104"}}, "IPv4 form"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.give)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestToolTimeoutsCoverTheirWork(t *testing.T) {
	reg := newTestRegistry(t, Config{HTTPTimeout: 45e9})
	sleep, ok := reg.Get(NameSleep)
	require.True(t, ok)
	assert.Greater(t, sleep.Options().Timeout.Seconds(), float64(MaxSleepSeconds))
	get, ok := reg.Get(NameHTTPGet)
	require.True(t, ok)
	assert.Greater(t, get.Options().Timeout.Seconds(), 45.0)
}
