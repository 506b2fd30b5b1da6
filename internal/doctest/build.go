package doctest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
)

// ModulePath is the import path the snippets use for this project.
const ModulePath = "github.com/toolgate/toolgate"

// Build writes snippets into packages of a new module in dir (outside the repository at root),
// and runs one `go build ./...` there. The module requires ModulePath, replaced by root, and
// every requirement of root's go.mod at the same versions, with root's go.sum, so the snippets
// compile against exactly the dependencies of this module. The error carries the compiler's
// output.
func Build(ctx context.Context, root, dir string, snippets []Snippet) error {
	goMod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return fmt.Errorf("read go.mod: %w", err)
	}
	mod, err := snippetModule(string(goMod), root)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(mod), 0o644); err != nil {
		return err
	}
	if sum, err := os.ReadFile(filepath.Join(root, "go.sum")); err == nil {
		if err := os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644); err != nil {
			return err
		}
	}
	for i, s := range snippets {
		pkgDir, file := snippetFile(dir, i, s)
		if err := os.MkdirAll(pkgDir, 0o755); err != nil {
			return err
		}
		target := filepath.Join(pkgDir, file)
		if _, err := os.Stat(target); err == nil {
			return fmt.Errorf("%s:%d: a snippet before names %s too", s.File, s.Line, s.Path())
		}
		if err := os.WriteFile(target, []byte(s.Source("snippet")), 0o644); err != nil {
			return err
		}
	}
	cmd := exec.CommandContext(ctx, goCommand(), "build", "./...")
	cmd.Dir = dir
	// -mod=mod is added to the caller's GOFLAGS, not put in their place: the build flags must be
	// the caller's (make test compiles everything with -dwarf=false) for the build cache to hit.
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS="+strings.TrimSpace(os.Getenv("GOFLAGS")+" -mod=mod"))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build of the snippets: %w\n%s", err, out.String())
	}
	return nil
}

// snippetFile says where snippet i goes: a package of its own, or, for a snippet naming its file
// (Snippet.Path), the package of its document and directory under that file's name. A _test.go
// file is written under another name, so `go build` compiles it too.
func snippetFile(dir string, i int, s Snippet) (pkgDir, file string) {
	p := s.Path()
	if p == "" {
		return filepath.Join(dir, fmt.Sprintf("s%02d_%s_%d", i+1, sanitize(s.File), s.Line)), "snippet.go"
	}
	pkgDir = filepath.Join(dir, "f_"+sanitize(s.File)+"_"+sanitize(path.Dir(p)))
	file = path.Base(p)
	if strings.HasSuffix(file, "_test.go") {
		file = strings.TrimSuffix(file, "_test.go") + "_test_snippet.go"
	}
	return pkgDir, file
}

var moduleLine = regexp.MustCompile(`(?m)^module\s+\S+\s*$`)

// snippetModule turns this module's go.mod into the snippets' go.mod.
func snippetModule(goMod, root string) (string, error) {
	if !moduleLine.MatchString(goMod) {
		return "", fmt.Errorf("go.mod of %s has no module line", root)
	}
	if strings.Contains(goMod, "\nreplace") {
		// Relative replace targets would point elsewhere from the temporary module.
		return "", fmt.Errorf("go.mod of %s has replace directives; teach doctest to rebase them", root)
	}
	mod := moduleLine.ReplaceAllString(goMod, "module doctest.example")
	mod += fmt.Sprintf("\nrequire %s v0.0.0\n\nreplace %s => %s\n", ModulePath, ModulePath, root)
	return mod, nil
}

func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, s)
}

// goCommand is the go command of the toolchain running the test, else the one on PATH.
func goCommand() string {
	//lint:ignore SA1019 the test binary runs on the machine that built it: GOROOT is the toolchain running the test
	p := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(p); err == nil {
		return p
	}
	return "go"
}
