package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/cmd/toolgate/internal/bench"
)

// TestBenchShort runs `toolgate bench --short --json` in process, on its own embedded server,
// with the default subjects, and checks that the report is structurally complete: every phase,
// every subject, the machine. Its figures are not asserted (tiny counts, a race-instrumented
// server). It keeps the bench working; -short skips it, like the end-to-end tests.
func TestBenchShort(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal server")
	}
	var out, errOut bytes.Buffer
	args := []string{"bench", "--short", "--json", "--progress", "plain"}
	code := run(context.Background(), args, streams{in: strings.NewReader(""), out: &out, err: &errOut}, noEnv)
	require.Equal(t, ExitOK, code, errOut.String())

	var rep bench.Report
	require.NoError(t, json.Unmarshal(out.Bytes(), &rep), out.String())
	require.NoError(t, rep.Check())
	assert.Equal(t, bench.DefaultSubjects(), rep.Settings.Subjects)
	assert.Equal(t, bench.Short().InFlight, rep.InFlight.Calls)
	for _, phase := range []string{"server", "in-process", "warmup", "latency", "breakdown", "throughput", "mcp", "in-flight", "probe", "drain", "history", "cost"} {
		assert.Contains(t, errOut.String(), "bench: "+phase+" done in", "progress of phase %s", phase)
	}

	var text strings.Builder
	require.NoError(t, rep.WriteText(&text))
	assert.Contains(t, text.String(), "Latency:")
}

func TestBenchUsageErrors(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		wantStderr string
	}{
		{name: "unknown subject", args: []string{"bench", "--subjects", "toolgate,fast", "--address", "127.0.0.1:1"}, wantStderr: "unknown subject"},
		{name: "unknown phase", args: []string{"bench", "--phases", "cost,speed", "--address", "127.0.0.1:1"}, wantStderr: "unknown phase"},
		{name: "bad progress", args: []string{"bench", "--progress", "sideways"}, wantStderr: "none of auto, bar, plain, off"},
		{name: "arguments", args: []string{"bench", "extra"}, wantStderr: "unknown command"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runIn(tt.args, nil, "")
			assert.Equal(t, ExitUsage, code)
			assert.Empty(t, stdout)
			assert.Contains(t, stderr, tt.wantStderr)
		})
	}
}

func noEnv(string) (string, bool) { return "", false }
