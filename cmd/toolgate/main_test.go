package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/toolcore"
)

// runIn runs toolgate in process with env (KEY=VALUE) and stdin.
func runIn(args []string, env []string, stdin string) (code int, stdout, stderr string) {
	vars := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	lookup := func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
	var out, errOut bytes.Buffer
	code = run(context.Background(), args, streams{in: strings.NewReader(stdin), out: &out, err: &errOut}, lookup)
	return code, out.String(), errOut.String()
}

func TestUsageErrors(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		env        []string
		wantStderr string
	}{
		{name: "unknown flag", args: []string{"--bogus"}, wantStderr: "unknown flag: --bogus"},
		{name: "unknown command", args: []string{"nosuch"}, wantStderr: `unknown command "nosuch"`},
		{name: "no command", args: nil, wantStderr: "missing subcommand"},
		{name: "too many call arguments", args: []string{"call", "add", "{}", "extra"}, wantStderr: "accepts at most 2 arg(s)"},
		{name: "malformed call arguments", args: []string{"call", "add", "[20,22]"}, wantStderr: "INVALID_TOOL_CALL"},
		{name: "malformed call on stdin", args: []string{"call"}, wantStderr: "INVALID_TOOL_CALL"},
		{name: "id with a call on stdin", args: []string{"call", "--id", "x"}, wantStderr: "brings its own id"},
		{name: "bad progress mode", args: []string{"call", "--progress", "sideways", "add"}, wantStderr: "none of auto, bar, plain, off"},
		{name: "result without an ID", args: []string{"result"}, wantStderr: "give the workflow ID"},
		{name: "both workflow ID and call ID", args: []string{"status", "toolcall-a", "--call-id", "a"}, wantStderr: "not both"},
		{name: "data dir and in-memory", args: []string{"dev", "--in-memory", "--data-dir", "x"}, wantStderr: "[data-dir in-memory] were all set"},
		{name: "db and in-memory", args: []string{"dev", "--in-memory", "--db", "postgres://u@h/d"}, wantStderr: "[db in-memory] were all set"},
		{name: "db not a PostgreSQL URL", args: []string{"dev", "--db", "mysql://u@h/d"}, wantStderr: "want postgres://"},
		{name: "http bearer without a secret name", args: []string{"worker", "--http-bearer", "nope"}, wantStderr: "want ORIGIN=SECRET"},
		{name: "http credential in clear text", args: []string{"worker", "--http-header", "http://api.example.com=X-Api-Key:key"}, wantStderr: "https only"},
		{name: "mcp beyond loopback without auth", args: []string{"mcp", "--listen", "0.0.0.0:0"}, wantStderr: "is not a loopback address"},
		{name: "mcp JWT without resource", args: []string{"mcp", "--listen", "127.0.0.1:0", "--auth-jwks-url", "https://id.example/jwks"}, wantStderr: "--auth-resource"},
		{name: "mcp token and JWT", args: []string{"mcp", "--listen", "127.0.0.1:0", "--auth-token-file", "t", "--auth-jwks-url", "https://id.example/jwks"}, wantStderr: "exclude each other"},
		{name: "mcp empty request state key", args: []string{"mcp", "--request-state-key-file", "/dev/null"}, wantStderr: "--request-state-key-file /dev/null is empty"},
		{name: "mcp missing token file", args: []string{"mcp", "--listen", "127.0.0.1:0", "--auth-token-file", "/nonexistent/token"}, wantStderr: "--auth-token-file"},
		{name: "bad log level", args: []string{"--log-level", "loud", "tools"}, wantStderr: "parse --log-level"},
		{name: "bad log format from env", args: []string{"tools"}, env: []string{"TOOLGATE_LOG_FORMAT=xml"}, wantStderr: "neither console nor json"},
		{name: "bad bool from env", args: []string{"status", "toolcall-a"}, env: []string{"TEMPORAL_TLS=maybe"}, wantStderr: "$TEMPORAL_TLS (--tls)"},
		{name: "cert without key", args: []string{"status", "toolcall-a", "--tls-cert-path", "c.pem"}, wantStderr: "go together"},
		{name: "replay without files", args: []string{"replay"}, wantStderr: "requires at least 1 arg(s)"},
		{name: "missing toolbox root", args: []string{"tools", "--root", "/does/not/exist"}, wantStderr: "build toolbox"},
		{name: "unknown dynamic config key", args: []string{"dev", "--in-memory", "--dynamic-config-value", "no.such.setting=1"}, wantStderr: `unregistered key "no.such.setting"`},
		{name: "dynamic config value not JSON", args: []string{"bench", "--dynamic-config-value", "history.longPollExpirationInterval=5s"}, wantStderr: "strings need quotes"},
		{name: "dynamic config with an address", args: []string{"bench", "--address", "127.0.0.1:1", "--dynamic-config-value", "history.hostLevelCacheMaxSize=1"}, wantStderr: "not with --address"},
		{name: "metrics beyond loopback without opt-in", args: []string{"worker", "--metrics-listen", "0.0.0.0:0"}, wantStderr: "--metrics-insecure-no-auth"},
		{name: "metrics on every interface without opt-in", args: []string{"mcp", "--metrics-listen", ":0"}, wantStderr: "not a loopback address"},
		{name: "workflow cache of zero", args: []string{"worker", "--workflow-cache", "0"}, wantStderr: "--workflow-cache 0: want at least 1"},
		{name: "mount timeout of zero", args: []string{"worker", "--mcp-timeout", "0s"}, wantStderr: "--mcp-timeout 0s: want a positive duration"},
		{name: "negative mount heartbeat timeout", args: []string{"worker", "--mcp-heartbeat-timeout", "-1s"}, wantStderr: "--mcp-heartbeat-timeout -1s: want a positive duration"},
		{name: "call counts too often", args: []string{"worker", "--calls-count-interval", "10ms"}, wantStderr: "--calls-count-interval 10ms: want at least 1s"},
		{name: "stuck after zero", args: []string{"dev", "--in-memory", "--stuck-after", "0s"}, wantStderr: "--stuck-after 0s: want a positive duration"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runIn(tt.args, tt.env, "")
			assert.Equal(t, ExitUsage, code, stderr)
			assert.Empty(t, stdout)
			assert.Contains(t, stderr, tt.wantStderr)
		})
	}
}

func TestHelp(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{name: "root", args: []string{"--help"}, want: []string{"Exit codes:", "5  any other failure", "dev", "replay"}},
		{name: "call", args: []string{"call", "--help"}, want: []string{"--detach", "[$TEMPORAL_ADDRESS]", "[$TOOLGATE_TASK_QUEUE]", "--tls-ca-path"}},
		{name: "dev", args: []string{"dev", "--help"}, want: []string{"--in-memory", "--ui-port", "frontend 127.0.0.1:7233", "[$TOOLGATE_DATA_DIR]"}},
		{name: "worker", args: []string{"worker", "--help"}, want: []string{"--setup", "--allow-host", "[$TEMPORAL_API_KEY]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runIn(tt.args, nil, "")
			require.Equal(t, ExitOK, code, stderr)
			for _, w := range tt.want {
				assert.Contains(t, stdout, w)
			}
		})
	}
}

func TestTools(t *testing.T) {
	code, stdout, stderr := runIn([]string{"tools", "--json"}, nil, "")
	require.Equal(t, ExitOK, code, stderr)
	var tools []toolcore.ToolInfo
	require.NoError(t, json.Unmarshal([]byte(stdout), &tools), stdout)
	byName := map[string]toolcore.ToolInfo{}
	for _, tool := range tools {
		byName[tool.Name] = tool
	}
	require.Contains(t, byName, "add")
	assert.Equal(t, "readOnly", byName["add"].SideEffect)
	assert.NotEmpty(t, byName["add"].Description)
	assert.NotContains(t, byName, "read_file", "no --root, no file tools")
	assert.Contains(t, string(byName["add"].InputSchema), `"required":["left","right"]`)
	assert.Regexp(t, `^sha256:[0-9a-f]{64}$`, byName["add"].DefinitionHash)

	code, stdout, stderr = runIn([]string{"tools", "--root", t.TempDir()}, nil, "")
	require.Equal(t, ExitOK, code, stderr)
	assert.True(t, strings.HasPrefix(stdout, "NAME"), stdout)
	assert.Contains(t, stdout, "read_file")
	assert.Contains(t, stdout, "sleep")
}

func TestConnectionFailureExits5(t *testing.T) {
	// Port 1 on loopback: nothing listens there.
	code, stdout, stderr := runIn([]string{"status", "toolcall-x", "--address", "127.0.0.1:1"}, nil, "")
	assert.Equal(t, ExitFailure, code, stderr)
	assert.Empty(t, stdout)
	assert.Contains(t, stderr, "connect to Temporal at 127.0.0.1:1")
	assert.Contains(t, stderr, "ERROR\tcommand failed: connect to Temporal")
}

func TestErrorLineFormats(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{
			name: "console keeps the error text readable",
			args: []string{"status", "--call-id", "x", "--tls-ca-path", "/no/ca.pem"},
			want: "ERROR\tbad input: read CA certificates: open /no/ca.pem: no such file or directory\n",
		},
		{
			name: "json has the error as a field",
			args: []string{"status", "--call-id", "x", "--tls-ca-path", "/no/ca.pem", "--log-format", "json"},
			want: `"msg":"bad input","error":"read CA certificates: open /no/ca.pem: no such file or directory"}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runIn(tt.args, nil, "")
			assert.Equal(t, ExitUsage, code)
			assert.Contains(t, stderr, tt.want)
		})
	}
}

// TestToolsFormatOpenAI is the model-ready list: every toolbox tool as an OpenAI function tool
// with its parameters schema.
func TestToolsFormatOpenAI(t *testing.T) {
	code, stdout, stderr := runIn([]string{"tools", "--format", "openai", "--root", t.TempDir()}, nil, "")
	require.Equal(t, ExitOK, code, stderr)
	var tools []struct {
		Type     string `json:"type"`
		Function struct {
			Name        string `json:"name"`
			Description string `json:"description"`
			Parameters  struct {
				Type       string                     `json:"type"`
				Properties map[string]json.RawMessage `json:"properties"`
			} `json:"parameters"`
			Strict *bool `json:"strict"`
		} `json:"function"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &tools), stdout)
	names := []string{}
	for _, tool := range tools {
		names = append(names, tool.Function.Name)
		assert.Equal(t, "function", tool.Type)
		assert.NotEmpty(t, tool.Function.Description)
		assert.Equal(t, "object", tool.Function.Parameters.Type)
		assert.NotEmpty(t, tool.Function.Parameters.Properties, tool.Function.Name)
		assert.Nil(t, tool.Function.Strict, "non-strict by default")
	}
	assert.Equal(t, []string{"add", "echo", "http_get", "list_dir", "read_file", "sleep", "write_file"}, names)
	assert.NotContains(t, stdout, "$schema")
}

func TestToolsFormats(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		{name: "mcp", args: []string{"tools", "--format", "mcp"}, wantStdout: `"annotations":{"readOnlyHint":true`},
		{name: "anthropic", args: []string{"tools", "--format", "anthropic"}, wantStdout: `"input_schema":{`},
		{name: "unknown format", args: []string{"tools", "--format", "gemini"}, wantCode: ExitUsage, wantStderr: `unknown format "gemini"`},
		{name: "strict without openai", args: []string{"tools", "--strict"}, wantCode: ExitUsage, wantStderr: "--strict needs --format openai"},
		{name: "strict refuses optional arguments", args: []string{"tools", "--format", "openai", "--strict", "--root", "."}, wantCode: ExitUsage, wantStderr: "cannot use OpenAI strict mode"},
		{name: "json and format", args: []string{"tools", "--json", "--format", "mcp"}, wantCode: ExitUsage, wantStderr: "exclude each other"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runIn(tt.args, nil, "")
			assert.Equal(t, tt.wantCode, code, stderr)
			assert.Contains(t, stdout, tt.wantStdout)
			assert.Contains(t, stderr, tt.wantStderr)
		})
	}
}
