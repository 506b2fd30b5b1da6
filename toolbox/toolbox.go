package toolbox

import (
	"fmt"
	"slices"
	"strings"

	"github.com/toolgate/toolgate/toolcore"
)

// Tool names.
const (
	NameEcho     = "echo"
	NameAdd      = "add"
	NameSleep    = "sleep"
	NameHTTPGet  = "http_get"
	NameReadFile = "read_file"
	NameListDir  = "list_dir"
	// NameWriteFile is the one tool with an effect: Unsafe, and every call waits for approval.
	NameWriteFile = "write_file"
)

// Tools returns the tools cfg selects, sorted by name: add, echo, sleep always; http_get unless
// cfg.DisableHTTP; list_dir, read_file and write_file when cfg.Root is set; the sandbox tools
// when cfg.Sandbox is set.
func Tools(cfg Config) ([]toolcore.Tool, error) {
	s, err := cfg.settings()
	if err != nil {
		return nil, fmt.Errorf("configure toolbox: %w", err)
	}
	makers := []func() (toolcore.Tool, error){addTool, echoTool}
	if !s.DisableHTTP {
		makers = append(makers, func() (toolcore.Tool, error) { return httpGetTool(s) })
	}
	if s.Root != "" {
		makers = append(makers, func() (toolcore.Tool, error) { return listDirTool(s) },
			func() (toolcore.Tool, error) { return readFileTool(s) })
	}
	makers = append(makers, func() (toolcore.Tool, error) { return sleepTool(s) })
	if s.Root != "" {
		makers = append(makers, func() (toolcore.Tool, error) { return writeFileTool(s) })
	}
	if s.Sandbox != nil {
		more, err := sandboxToolMakers(s)
		if err != nil {
			return nil, fmt.Errorf("configure toolbox: %w", err)
		}
		makers = append(makers, more...)
	}
	return define(makers)
}

// SandboxTools returns the sandbox tools of cfg.Sandbox alone (Tools returns them among the
// others), sorted by name: for a worker that adds them to a registry built before its sandbox.
func SandboxTools(cfg Config) ([]toolcore.Tool, error) {
	if cfg.Sandbox == nil {
		return nil, nil
	}
	s, err := cfg.settings()
	if err != nil {
		return nil, fmt.Errorf("configure toolbox: %w", err)
	}
	makers, err := sandboxToolMakers(s)
	if err != nil {
		return nil, fmt.Errorf("configure toolbox: %w", err)
	}
	return define(makers)
}

// define runs the makers and sorts their tools by name.
func define(makers []func() (toolcore.Tool, error)) ([]toolcore.Tool, error) {
	tools := make([]toolcore.Tool, 0, len(makers))
	for _, m := range makers {
		t, err := m()
		if err != nil {
			return nil, fmt.Errorf("define tool: %w", err)
		}
		tools = append(tools, t)
	}
	slices.SortFunc(tools, func(a, b toolcore.Tool) int { return strings.Compare(a.Name(), b.Name()) })
	return tools, nil
}

// New returns a registry holding Tools(cfg).
func New(cfg Config) (*toolcore.Registry, error) {
	tools, err := Tools(cfg)
	if err != nil {
		return nil, err
	}
	reg, err := toolcore.NewRegistry(tools...)
	if err != nil {
		return nil, fmt.Errorf("register toolbox: %w", err)
	}
	return reg, nil
}
