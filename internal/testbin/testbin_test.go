package testbin

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPrebuilt(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "toolgate")
	require.NoError(t, os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755))
	plain := filepath.Join(dir, "plain")
	require.NoError(t, os.WriteFile(plain, []byte("x"), 0o644))

	tests := []struct {
		name    string
		give    string
		wantErr bool
	}{
		{name: "executable", give: exe},
		{name: "missing", give: filepath.Join(dir, "none"), wantErr: true},
		{name: "directory", give: dir, wantErr: true},
		{name: "not executable", give: plain, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := prebuilt(tt.give)
			if tt.wantErr {
				assert.ErrorContains(t, err, EnvToolgate)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.give, got)
		})
	}
}

func TestRoot(t *testing.T) {
	root, err := Root()
	require.NoError(t, err)
	assert.FileExists(t, filepath.Join(root, "go.work"))
	assert.DirExists(t, filepath.Join(root, "internal", "testbin"))
}
