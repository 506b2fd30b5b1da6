package toolbox

import (
	"fmt"

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
// cfg.DisableHTTP; list_dir, read_file and write_file when cfg.Root is set.
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
	tools := make([]toolcore.Tool, 0, len(makers))
	for _, m := range makers {
		t, err := m()
		if err != nil {
			return nil, fmt.Errorf("define tool: %w", err)
		}
		tools = append(tools, t)
	}
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
