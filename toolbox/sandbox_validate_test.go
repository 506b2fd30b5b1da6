package toolbox

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/sandbox"
	"github.com/toolgate/toolgate/toolcore"
)

// refusingSandbox is a sandbox configuration whose runner and workspaces fail the test when
// anything reaches them: validation alone must decide.
func refusingSandbox(t *testing.T) *Sandbox {
	return &Sandbox{
		Workspaces: new(sandbox.Workspaces),
		Env:        []string{"GOFLAGS", "CGO_ENABLED"},
		Commands:   []SandboxCommand{{Name: "run_tests", Argv: []string{"go", "test", "./..."}, Idempotent: true}},
		run: func(context.Context, string, sandbox.Command) (sandbox.Output, error) {
			t.Error("a command ran although its call was refused")
			return sandbox.Output{}, nil
		},
	}
}

// Every bad argument of exec and of the workspace file tools is refused by the validator, with a
// reason the model can act on, before any workspace is opened or command run.
func TestSandboxToolsRejectBeforeRunning(t *testing.T) {
	reg := newTestRegistry(t, Config{Sandbox: refusingSandbox(t)})
	long := strings.Repeat("a", MaxExecArgvBytes)
	assertRejects(t, reg, NameExec, []rejectCase{
		{"neither argv nor shell", `{}`, `"argv" (the program and its arguments) or "shell" (a line for /bin/sh -c) is required`},
		{"both", `{"argv":["true"],"shell":"true"}`, `give "argv" or "shell", not both`},
		{"unknown member", `{"argv":["true"],"cwd":"x"}`, `unknown argument "cwd"; allowed: "argv", "shell", "stdin", "env", "dir", "timeout"`},
		{"argv a string", `{"argv":"ls -l"}`, `"argv" must be an array of strings, not a string`},
		{"argv empty", `{"argv":[]}`, `"argv" must hold 1 to 1024 strings`},
		{"argv too many", `{"argv":[` + strings.TrimSuffix(strings.Repeat(`"x",`, MaxExecArgs+1), ",") + `]}`, `"argv" must hold 1 to 1024 strings`},
		{"argv a number", `{"argv":["echo",1]}`, `"argv"[1] must be a string, not a number`},
		{"argv empty program", `{"argv":["","x"]}`, `"argv"[0], the program, must not be empty`},
		{"argv NUL", `{"argv":["echo","a\u0000b"]}`, `"argv"[1] must not contain NUL bytes`},
		{"argv too large", `{"argv":["echo","` + long + `"]}`, `"argv" must hold at most 65536 bytes in all`},
		{"shell blank", `{"shell":"  "}`, `"shell" must not be blank`},
		{"shell NUL", `{"shell":"echo \u0000"}`, `"shell" must not contain NUL bytes`},
		{"shell too long", `{"shell":"` + strings.Repeat("x", MaxExecShellBytes+1) + `"}`, `"shell" must be at most 65536 bytes`},
		{"stdin not a string", `{"argv":["cat"],"stdin":["x"]}`, `"stdin" must be a string, not an array`},
		{"stdin too long", `{"argv":["cat"],"stdin":"` + strings.Repeat("x", MaxExecStdinBytes+1) + `"}`, `"stdin" must be at most 131072 bytes`},
		{"env not allowed", `{"argv":["env"],"env":{"LD_PRELOAD":"/x.so"}}`, `"env": "LD_PRELOAD" is not a variable this tool sets; allowed: "CGO_ENABLED", "GOFLAGS"`},
		{"env PATH", `{"argv":["env"],"env":{"PATH":"/x"}}`, `"env": "PATH" is not a variable this tool sets; allowed: "CGO_ENABLED", "GOFLAGS"`},
		{"env not an object", `{"argv":["env"],"env":["GOFLAGS=x"]}`, `"env" must be an object of strings, not an array`},
		{"env value not a string", `{"argv":["env"],"env":{"GOFLAGS":1}}`, `"env": "GOFLAGS" must be a string, not a number`},
		{"env value NUL", `{"argv":["env"],"env":{"GOFLAGS":"a\u0000"}}`, `"env": "GOFLAGS" must be at most 4096 bytes, without NUL bytes`},
		{"env value too long", `{"argv":["env"],"env":{"GOFLAGS":"` + strings.Repeat("x", MaxExecEnvValueBytes+1) + `"}}`, `"env": "GOFLAGS" must be at most 4096 bytes, without NUL bytes`},
		{"dir absolute", `{"argv":["ls"],"dir":"/etc"}`, `"dir" must be relative to the workspace, not absolute`},
		{"dir dot-dot", `{"argv":["ls"],"dir":"a/../../b"}`, `"dir" must not contain ".." elements`},
		{"dir empty", `{"argv":["ls"],"dir":""}`, `"dir" must not be empty; use "." for the workspace`},
		{"dir NUL", `{"argv":["ls"],"dir":"a\u0000"}`, `"dir" must not contain NUL bytes`},
		{"timeout zero", `{"argv":["ls"],"timeout":0}`, `"timeout" must be a whole number of seconds between 1 and 3600`},
		{"timeout fraction", `{"argv":["ls"],"timeout":1.5}`, `"timeout" must be a whole number of seconds between 1 and 3600`},
		{"timeout too long", `{"argv":["ls"],"timeout":3601}`, `"timeout" must be a whole number of seconds between 1 and 3600`},
	})
	assertRejects(t, reg, "run_tests", []rejectCase{
		{"a named command takes no arguments", `{"argv":["rm","-rf","."]}`, `unknown argument "argv"; allowed: none`},
	})
	assertRejects(t, reg, NameWorkspaceWriteFile, []rejectCase{
		{"no path", `{"content":"x"}`, `"path" is required`},
		{"absolute", `{"path":"/etc/passwd","content":"x"}`, `"path" must be relative to the workspace, not absolute`},
		{"dot-dot", `{"path":"../x","content":"x"}`, `"path" must not contain ".." elements`},
		{"the root itself", `{"path":".","content":"x"}`, `"path" must name a file, not the workspace itself`},
		{"no content", `{"path":"a"}`, `"content" is required`},
		{"content too long", `{"path":"a","content":"` + strings.Repeat("x", MaxWorkspaceWriteBytes+1) + `"}`, `"content" must be at most 196608 bytes`},
		{"executable not a boolean", `{"path":"a","content":"","executable":"yes"}`, `"executable" must be a boolean, not a string`},
	})
	assertRejects(t, reg, NameWorkspaceReadFile, []rejectCase{
		{"absolute", `{"path":"/etc/passwd"}`, `"path" must be relative to the workspace, not absolute`},
		{"dot-dot", `{"path":"a/../../etc/passwd"}`, `"path" must not contain ".." elements`},
	})
	assertRejects(t, reg, NameWorkspaceListDir, []rejectCase{
		{"absolute", `{"path":"/"}`, `"path" must be relative to the workspace, not absolute`},
	})
}

// Without allowed variables exec's schema has no env and its validator refuses any.
func TestExecWithoutEnvAllowList(t *testing.T) {
	cfg := refusingSandbox(t)
	cfg.Env = nil
	reg := newTestRegistry(t, Config{Sandbox: cfg})
	assertRejects(t, reg, NameExec, []rejectCase{
		{"any variable", `{"argv":["env"],"env":{"GOFLAGS":"-v"}}`, `"env": this tool sets no environment variables`},
	})
	tool, ok := reg.Get(NameExec)
	require.True(t, ok)
	assert.NotContains(t, string(tool.InputSchema()), `"env"`)

	withEnv := newTestRegistry(t, Config{Sandbox: refusingSandbox(t)})
	tool, ok = withEnv.Get(NameExec)
	require.True(t, ok)
	var schema struct {
		Properties map[string]struct {
			Properties map[string]json.RawMessage `json:"properties"`
		} `json:"properties"`
	}
	require.NoError(t, json.Unmarshal(tool.InputSchema(), &schema))
	assert.Equal(t, []string{"CGO_ENABLED", "GOFLAGS"}, sortedKeys(schema.Properties["env"].Properties))
}

// The side-effect classes: exec and an unsafe named command are Unsafe with a Reconcile, and are
// run again after a lost attempt that committed nothing only when they have no network; an
// idempotent named command is retried; the file tools read or write idempotently.
func TestSandboxToolOptions(t *testing.T) {
	tests := []struct {
		name       string
		hosts      []string
		tool       string
		wantEffect toolcore.SideEffect
		wantRerun  bool
		wantRecon  bool
	}{
		{"exec without network", nil, NameExec, toolcore.Unsafe, true, true},
		{"exec with allowed hosts", []string{"proxy.golang.org"}, NameExec, toolcore.Unsafe, false, true},
		{"unsafe command", nil, "build", toolcore.Unsafe, true, true},
		{"unsafe command with hosts", []string{"proxy.golang.org"}, "build", toolcore.Unsafe, false, true},
		{"idempotent command", nil, "run_tests", toolcore.Idempotent, false, false},
		{"write", nil, NameWorkspaceWriteFile, toolcore.Idempotent, false, false},
		{"read", nil, NameWorkspaceReadFile, toolcore.ReadOnly, false, false},
		{"list", nil, NameWorkspaceListDir, toolcore.ReadOnly, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := refusingSandbox(t)
			cfg.AllowHosts = tt.hosts
			cfg.Commands = append(cfg.Commands, SandboxCommand{Name: "build", Shell: "go build ./..."})
			reg := newTestRegistry(t, Config{Sandbox: cfg})
			tool, ok := reg.Get(tt.tool)
			require.True(t, ok)
			assert.Equal(t, tt.wantEffect, tool.Options().SideEffect)
			assert.Equal(t, tt.wantRerun, tool.Options().RerunWhenNotReconciled)
			assert.Equal(t, tt.wantRecon, tool.CanReconcile())
			assert.Equal(t, sandbox.DefaultLimits.Wall+sandboxCommitTime, tool.Options().Timeout)
		})
	}
}

func TestSandboxConfigRejects(t *testing.T) {
	ws := new(sandbox.Workspaces)
	run := func(context.Context, string, sandbox.Command) (sandbox.Output, error) { return sandbox.Output{}, nil }
	tests := []struct {
		name string
		give Sandbox
		want string
	}{
		{"no workspaces", Sandbox{run: run}, "Workspaces is required"},
		{"no runner", Sandbox{Workspaces: ws}, "Runner is required for exec and commands"},
		{"bad env name", Sandbox{Workspaces: ws, run: run, Env: []string{"A-B"}}, `environment name "A-B"`},
		{"reserved env name", Sandbox{Workspaces: ws, run: run, Env: []string{"PATH"}}, `environment name "PATH": the sandbox sets it`},
		{"command without program", Sandbox{Workspaces: ws, run: run, Commands: []SandboxCommand{{Name: "x"}}}, `command "x": "argv" (the program`},
		{"command outside", Sandbox{Workspaces: ws, run: run, Commands: []SandboxCommand{{Name: "x", Argv: []string{"ls"}, Dir: "/etc"}}}, `command "x": "dir" must be relative`},
		{"command twice", Sandbox{Workspaces: ws, run: run, Commands: []SandboxCommand{{Name: "x", Shell: "ls"}, {Name: "x", Shell: "ls"}}}, `command "x": declared twice`},
		{"command env", Sandbox{Workspaces: ws, run: run, Commands: []SandboxCommand{{Name: "x", Shell: "ls", Env: map[string]string{"HOME": "/"}}}}, `command "x": environment name "HOME" is not allowed`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Tools(Config{Sandbox: &tt.give})
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	// The file tools alone need no runner.
	tools, err := Tools(Config{DisableHTTP: true, Sandbox: &Sandbox{Workspaces: ws, DisableExec: true}})
	require.NoError(t, err)
	var names []string
	for _, tool := range tools {
		names = append(names, tool.Name())
	}
	assert.Equal(t, []string{NameAdd, NameEcho, NameSleep, NameWorkspaceListDir, NameWorkspaceReadFile, NameWorkspaceWriteFile}, names, fmt.Sprint(names))
}

// The sandbox's proxy dials as http_get does: a name that resolves to a loopback, private or
// metadata address is refused without a connection, unless the operator allows it.
func TestPublicDialerRefusesInternalAddresses(t *testing.T) {
	dial, err := PublicDialer(Config{Resolver: fakeResolver{"internal.test": {netip.MustParseAddr("10.1.2.3")}}})
	require.NoError(t, err)
	for _, addr := range []string{"127.0.0.1:80", "internal.test:443", "169.254.169.254:80", "[::1]:443"} {
		_, err := dial(context.Background(), "tcp", addr)
		var refused *refusedError
		assert.ErrorAs(t, err, &refused, addr)
	}
	_, err = PublicDialer(Config{AllowHosts: []string{"bad host"}})
	assert.Error(t, err)
}
