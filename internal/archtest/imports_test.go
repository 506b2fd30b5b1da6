package archtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const module = "github.com/toolgate/toolgate"

// pkg is what `go list -json` says of one package of the module.
type pkg struct {
	ImportPath   string
	Standard     bool
	Imports      []string
	Deps         []string
	TestImports  []string
	XTestImports []string
}

// rule forbids packages matching from to depend on packages matching to.
type rule struct {
	name string
	from []string // import paths; a trailing "/..." matches the path and everything under it
	to   []string
	// direct: only the package's own imports (test files included) count, not its deps.
	direct bool
	// except: packages matching from that the rule does not apply to.
	except []string
}

var rules = []rule{
	{
		name: "toolcore imports nothing of Temporal",
		from: []string{module + "/toolcore/..."},
		to:   []string{"go.temporal.io/..."},
	},
	{
		name:   "toolcore tests import nothing of Temporal",
		from:   []string{module + "/toolcore/..."},
		to:     []string{"go.temporal.io/..."},
		direct: true,
	},
	{
		name: "wire imports only the standard library and the Temporal SDK",
		from: []string{module + "/wire/..."},
		to:   []string{"*"},
	},
	{
		name: "the durable path never links the server",
		from: []string{
			module + "/workflows/...", module + "/activities/...", module + "/worker/...",
			module + "/client/...", module + "/toolbox/...", module + "/wire/...",
		},
		to: []string{"go.temporal.io/server/...", module + "/cmd/toolgate/internal/devserver/..."},
	},
	{
		// So the suites that use them run under the race detector without compiling the server.
		name: "shared test servers are processes, never linked",
		from: []string{module + "/internal/devtest", module + "/internal/testbin"},
		to:   []string{"go.temporal.io/server/...", module + "/cmd/toolgate/internal/devserver"},
	},
	{
		// Every name the two share is in wire (issue 21: one public name per value).
		name: "workflows and activities never depend on client",
		from: []string{module + "/workflows", module + "/activities"},
		to:   []string{module + "/client/..."},
	},
	{
		name: "client never depends on activities",
		from: []string{module + "/client/..."},
		to:   []string{module + "/activities/..."},
	},
	{
		name:   "only cmd/toolgate/internal/devserver imports the server",
		from:   []string{module + "/..."},
		to:     []string{"go.temporal.io/server/..."},
		direct: true,
		// cmd/toolgate/internal/cluster configures multi-process clusters on PostgreSQL for tests;
		// cmd/toolgate/internal/pgstore sets up PostgreSQL stores for both (schema tooling).
		// cmd/toolgate/internal/reviewauth is an authorizer for the server's frontend.
		except: []string{module + "/cmd/toolgate/internal/devserver", module + "/cmd/toolgate/internal/cluster/...", module + "/cmd/toolgate/internal/pgstore", module + "/cmd/toolgate/internal/reviewauth"},
	},
}

// match reports whether path matches pattern ("x/..." is x and everything under it; "*" is
// every package outside the standard library and the Temporal SDK, see violations).
func match(pattern, path string) bool {
	if prefix, ok := strings.CutSuffix(pattern, "/..."); ok {
		return path == prefix || strings.HasPrefix(path, prefix+"/")
	}
	return path == pattern
}

func matchAny(patterns []string, path string) bool {
	for _, p := range patterns {
		if match(p, path) {
			return true
		}
	}
	return false
}

// violations returns one line per forbidden arrow; standard reports whether an import path is
// in the standard library.
func violations(pkgs []pkg, rules []rule, standard func(string) bool) []string {
	var out []string
	for _, r := range rules {
		for _, p := range pkgs {
			if !matchAny(r.from, p.ImportPath) || matchAny(r.except, p.ImportPath) {
				continue
			}
			deps := p.Deps
			if r.direct {
				deps = append(append(append([]string(nil), p.Imports...), p.TestImports...), p.XTestImports...)
			}
			var bad []string
			for _, d := range deps {
				forbidden := matchAny(r.to, d)
				if len(r.to) == 1 && r.to[0] == "*" {
					forbidden = !standard(d) && !match("go.temporal.io/sdk/...", d) && !strings.HasPrefix(d, module+"/wire")
				}
				if forbidden {
					bad = append(bad, d)
				}
			}
			if len(bad) > 3 {
				bad = append(bad[:3], fmt.Sprintf("and %d more", len(bad)-3))
			}
			if len(bad) > 0 {
				out = append(out, r.name+": "+p.ImportPath+" -> "+strings.Join(bad, ", "))
			}
		}
	}
	return out
}

// listModule runs go list over the module (from the module root, this package's ../..).
func listModule(t *testing.T) (pkgs []pkg, standard map[string]bool) {
	t.Helper()
	goBin, err := exec.LookPath("go")
	require.NoError(t, err, "the import rules need the go command on PATH")
	cmd := exec.Command(goBin, "list", "-e", "-deps", "-test=false",
		"-json=ImportPath,Standard,Imports,Deps,TestImports,XTestImports", module+"/...")
	cmd.Dir = "../.."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "go list: %s", stderr.String())
	standard = map[string]bool{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else {
			require.NoError(t, err)
		}
		if p.Standard {
			standard[p.ImportPath] = true
		}
		if match(module+"/...", p.ImportPath) {
			pkgs = append(pkgs, p)
		}
	}
	return pkgs, standard
}

func TestImportRules(t *testing.T) {
	pkgs, standard := listModule(t)
	require.NotEmpty(t, pkgs)
	for _, want := range []string{"toolcore", "wire", "workflows", "activities", "worker", "client", "toolbox", "cmd/toolgate/internal/devserver"} {
		require.True(t, slicesContainsPath(pkgs, module+"/"+want), "go list lists %s", want)
	}
	// Test-only imports (TestImports of the listed packages) are not in -deps: list them as
	// standard when they look like it (no dot in the first path element).
	isStandard := func(path string) bool {
		return standard[path] || !strings.Contains(strings.SplitN(path, "/", 2)[0], ".")
	}
	assert.Empty(t, violations(pkgs, rules, isStandard), "import rules (see doc.go)")
}

func slicesContainsPath(pkgs []pkg, path string) bool {
	for _, p := range pkgs {
		if p.ImportPath == path {
			return true
		}
	}
	return false
}

// The checker itself: each rule catches a forbidden arrow and lets the allowed ones pass.
func TestViolations(t *testing.T) {
	isStandard := func(path string) bool { return !strings.Contains(strings.SplitN(path, "/", 2)[0], ".") }
	tests := []struct {
		name string
		give pkg
		want []string
	}{
		{
			name: "toolcore linking the SDK",
			give: pkg{ImportPath: module + "/toolcore", Deps: []string{"context", "go.temporal.io/sdk/workflow"}},
			want: []string{"toolcore imports nothing of Temporal: " + module + "/toolcore -> go.temporal.io/sdk/workflow"},
		},
		{
			name: "toolcore test importing the API",
			give: pkg{ImportPath: module + "/toolcore", XTestImports: []string{"go.temporal.io/api/enums/v1"}},
			want: []string{"toolcore tests import nothing of Temporal: " + module + "/toolcore -> go.temporal.io/api/enums/v1"},
		},
		{
			name: "wire importing toolcore",
			give: pkg{ImportPath: module + "/wire", Deps: []string{"encoding/json", module + "/toolcore"}},
			want: []string{"wire imports only the standard library and the Temporal SDK: " + module + "/wire -> " + module + "/toolcore"},
		},
		{
			name: "worker linking the dev server",
			give: pkg{ImportPath: module + "/worker", Deps: []string{module + "/cmd/toolgate/internal/devserver"}},
			want: []string{"the durable path never links the server: " + module + "/worker -> " + module + "/cmd/toolgate/internal/devserver"},
		},
		{
			name: "client depending on activities",
			give: pkg{ImportPath: module + "/client", Deps: []string{module + "/activities"}},
			want: []string{"client never depends on activities: " + module + "/client -> " + module + "/activities"},
		},
		{
			name: "a command importing the server",
			give: pkg{ImportPath: module + "/cmd/toolgate", Imports: []string{"go.temporal.io/server/temporal"}},
			want: []string{"only cmd/toolgate/internal/devserver imports the server: " + module + "/cmd/toolgate -> go.temporal.io/server/temporal"},
		},
		{
			name: "the dev server importing the server",
			give: pkg{ImportPath: module + "/cmd/toolgate/internal/devserver", Imports: []string{"go.temporal.io/server/temporal"}, Deps: []string{"go.temporal.io/server/temporal"}},
		},
		{
			name: "a command linking the server through the dev server",
			give: pkg{ImportPath: module + "/cmd/toolgate", Imports: []string{module + "/cmd/toolgate/internal/devserver"}, Deps: []string{module + "/cmd/toolgate/internal/devserver", "go.temporal.io/server/temporal"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, violations([]pkg{tt.give}, rules, isStandard))
		})
	}
}

// make test's staticcheck analyzes cmd/toolgate built with the toolgate_noserver tag: so built,
// tests included, it must reach nothing of the server (else the analysis pays for the server's
// ~1,600 packages again). Only cmd/toolgate/embedded_server.go may bring the server in.
func TestToolgateWithoutServerTag(t *testing.T) {
	goBin, err := exec.LookPath("go")
	require.NoError(t, err, "the import rules need the go command on PATH")
	cmd := exec.Command(goBin, "list", "-tags", "toolgate_noserver", "-deps", "-test", "./cmd/toolgate")
	cmd.Dir = "../.."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "go list: %s", stderr.String())
	deps := strings.Fields(string(out))
	require.Contains(t, deps, module+"/cmd/toolgate")
	for _, d := range deps {
		assert.False(t, match("go.temporal.io/server/...", d) || d == module+"/cmd/toolgate/internal/devserver",
			"cmd/toolgate built with toolgate_noserver reaches %s: import the server only in embedded_server.go", d)
	}
}
