package bench

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCPUModel(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		give string // file content; "" means no file
		want string
	}{
		{name: "first model name", give: "processor\t: 0\nmodel name\t: AMD EPYC 7B13\nprocessor\t: 1\nmodel name\t: other\n", want: "AMD EPYC 7B13"},
		{name: "no model name", give: "processor\t: 0\n", want: "unknown"},
		{name: "empty model name", give: "model name\t: \n", want: "unknown"},
		{name: "no file", want: "unknown"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, "cpuinfo"+string(rune('a'+i)))
			if tt.give != "" {
				require.NoError(t, os.WriteFile(path, []byte(tt.give), 0o600))
			}
			assert.Equal(t, tt.want, cpuModel(path))
		})
	}
}

func TestDescribeMachine(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	m := describeMachine(now)
	assert.Equal(t, "2026-01-02T03:04:05Z", m.Date)
	assert.NotEmpty(t, m.GoVersion)
	assert.Positive(t, m.CPUs)
	assert.Positive(t, m.GOMAXPROCS)
	assert.NotEmpty(t, m.CPUModel)
}
