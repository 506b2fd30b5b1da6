package mcp_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// interopDir is the npm package with the MCP TypeScript SDK client script.
const interopDir = "../interop"

// runTypeScriptClient runs interop/mcp-client.mjs SCENARIO with the official MCP TypeScript SDK
// against a toolgate MCP server and decodes its report.
func runTypeScriptClient(t *testing.T, scenario string, env []string, report any) {
	t.Helper()
	cmd := typeScriptClient(t, scenario, env)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "node mcp-client.mjs %s: %s", scenario, stderr.String())
	require.NoError(t, json.Unmarshal(stdout.Bytes(), report), "report: %s", stdout.String())
}

// typeScriptClient returns the command running interop/mcp-client.mjs SCENARIO, failing the test
// with the fix when Node or the SDK is missing.
func typeScriptClient(t *testing.T, scenario string, env []string) *exec.Cmd {
	t.Helper()
	if _, err := os.Stat(filepath.Join(interopDir, "node_modules", "@modelcontextprotocol", "sdk")); err != nil {
		t.Fatalf("the MCP TypeScript SDK is not installed in interop/node_modules: run `make setup` (%v)", err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is missing: install Node.js 20 and run `make setup` (%v)", err)
	}
	cmd := exec.CommandContext(t.Context(), node, "mcp-client.mjs", scenario)
	cmd.Dir = interopDir
	cmd.Env = childEnv(env...)
	return cmd
}

// transports returns, for each MCP transport, the environment pointing the TypeScript client at
// a real `toolgate mcp` process serving f's worker: stdio has the client spawn it, http starts
// one with --listen here.
func transports(t *testing.T, f *fixture) map[string][]string {
	return map[string][]string{
		"stdio": stdioEnv(t, f),
		"http":  startMCPProcess(t, f).env(),
	}
}

type tsToolResult struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	IsError bool `json:"isError"`
}

type tsError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

func TestTypeScriptClientBasic(t *testing.T) {
	f := newFixture(t)
	for name, env := range transports(t, f) {
		t.Run(name, func(t *testing.T) {
			key := "ts-key-" + name
			var report struct {
				Tools []struct {
					Name        string `json:"name"`
					Annotations struct {
						ReadOnlyHint    bool `json:"readOnlyHint"`
						DestructiveHint bool `json:"destructiveHint"`
						IdempotentHint  bool `json:"idempotentHint"`
					} `json:"annotations"`
					InputSchemaType string `json:"inputSchemaType"`
				} `json:"tools"`
				Echo, Fails, Invalid   tsToolResult
				CountFirst, CountRetry tsToolResult
				Fatal, Conflict        tsError
			}
			runTypeScriptClient(t, "basic", append(env, "MCP_KEY="+key), &report)

			require.Len(t, report.Tools, len(f.infos))
			for _, tool := range report.Tools {
				assert.Equal(t, "object", tool.InputSchemaType)
				if tool.Name == "echo" {
					assert.True(t, tool.Annotations.ReadOnlyHint)
					assert.False(t, tool.Annotations.DestructiveHint)
				}
			}
			assert.False(t, report.Echo.IsError)
			assert.JSONEq(t, `{"text":"hello"}`, report.Echo.Content[0].Text)
			assert.True(t, report.Fails.IsError)
			assert.Contains(t, report.Fails.Content[0].Text, "TOOL_EXECUTION_FAILED")
			assert.True(t, report.Invalid.IsError)
			assert.Contains(t, report.Invalid.Content[0].Text, "TOOL_ARGUMENTS_INVALID")
			assert.Equal(t, -32603, report.Fatal.Code)
			assert.JSONEq(t, `{"type":"NonRecoverableToolError"}`, string(report.Fatal.Data))
			assert.JSONEq(t, `{"runs":1}`, report.CountFirst.Content[0].Text)
			assert.JSONEq(t, `{"runs":1}`, report.CountRetry.Content[0].Text)
			assert.Equal(t, 1, f.tools.runsOf(key), "the retried call ran the tool again")
			assert.Equal(t, -32602, report.Conflict.Code)
		})
	}
}

func TestTypeScriptClientProgressAndCancel(t *testing.T) {
	f := newFixture(t)
	for name, env := range transports(t, f) {
		t.Run(name, func(t *testing.T) {
			var report struct {
				Progress []struct {
					Progress float64 `json:"progress"`
					Total    float64 `json:"total"`
					Message  string  `json:"message"`
				} `json:"progress"`
				Outcome  string       `json:"outcome"`
				Observed tsToolResult `json:"observed"`
			}
			runTypeScriptClient(t, "cancel", env, &report)
			require.NotEmpty(t, report.Progress)
			assert.Equal(t, "halfway", report.Progress[0].Message)
			assert.EqualValues(t, 1, report.Progress[0].Progress)
			assert.EqualValues(t, 2, report.Progress[0].Total)
			assert.Equal(t, "error", report.Outcome)
			assert.JSONEq(t, `{"canceled":true}`, report.Observed.Content[0].Text)
		})
	}
}
