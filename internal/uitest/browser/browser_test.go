package browser

import (
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFindRendersAPage has the Chromium that make setup installed render a page to the DOM.
func TestFindRendersAPage(t *testing.T) {
	path, err := Find()
	require.NoError(t, err)

	page := "data:text/html,<title>t</title><p id=x>rendered-by-chromium</p>"
	args := Args(t.TempDir(), "--dump-dom", page)
	out, err := exec.CommandContext(t.Context(), path, args...).Output()
	require.NoError(t, err)
	assert.Contains(t, string(out), "rendered-by-chromium")
}

func TestFindIgnoresMissingCandidates(t *testing.T) {
	_, ok := find([]string{t.TempDir() + "/none"})
	assert.False(t, ok)

	exe := t.TempDir() + "/chromium"
	require.NoError(t, os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755))
	got, ok := find([]string{t.TempDir() + "/none", exe})
	assert.True(t, ok)
	assert.Equal(t, exe, got)
}

func TestLocateNamesMakeSetup(t *testing.T) {
	missing := t.TempDir() + "/none"
	_, err := locate([]string{missing})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "make setup")
	assert.Contains(t, err.Error(), missing)
}
