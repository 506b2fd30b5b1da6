package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const histories = "../../testdata/histories"

// TestReplayMissingToolIsOneLine: a history whose tool this build's toolbox lacks (the fixture
// tools are the tests' own) fails with one line naming the tool and the toolbox, whether its run
// got as far as the tool's activity or only to an approval's timer, and neither stream carries
// the SDK's TMPRL1100 panic or a stack trace; the other files still replay.
func TestReplayMissingToolIsOneLine(t *testing.T) {
	approved := filepath.Join(histories, "fixtures", "approval-approved.json")
	rejected := filepath.Join(histories, "fixtures", "approval-rejected.json")
	success := filepath.Join(histories, "success.json")

	code, stdout, stderr := runIn([]string{"replay", approved, rejected, success}, nil, "")
	assert.Equal(t, ExitErrorResult, code, stderr)
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	require.Len(t, lines, 3, stdout)
	for i, file := range []string{approved, rejected} {
		assert.True(t, strings.HasPrefix(lines[i], "FAIL "+file+`: history calls tool "fixture_approve"; this build's registry has: `), lines[i])
		assert.Contains(t, lines[i], "add, echo")
	}
	assert.Equal(t, "PASS "+success, lines[2])
	for name, text := range map[string]string{"stdout": stdout, "stderr": stderr} {
		assert.NotContains(t, text, "TMPRL1100", name)
		assert.NotContains(t, text, "panic", name)
		assert.NotContains(t, text, ".go:", name, "a stack trace")
	}
	assert.Empty(t, stderr, "one-shot commands log warnings only")
}
