package bench

import (
	"context"
	"errors"

	"github.com/toolgate/toolgate/toolcore"
)

// SubjectToolgateLocal is toolgate with the tool's Options.Local fast path: a ReadOnly tool run
// as a local activity inside the workflow task (one workflow task per call, no activity task).
const SubjectToolgateLocal = "toolgate-local"

// Names of the Local twins of the no-op and failing tools.
const (
	toolNoopLocal = "noop-local"
	toolFailLocal = "fail-local"
)

// localOptions are the options of the Local bench tools: the fast path needs ReadOnly.
var localOptions = toolcore.Options{SideEffect: toolcore.ReadOnly, Local: true}

// localToolName is toolName for the toolgate-local subject.
func localToolName(kind callKind) string {
	if kind == callFail {
		return toolFailLocal
	}
	return toolNoopLocal
}

// noopLocalTool is noopTool on the Local fast path.
func noopLocalTool() (toolcore.Tool, error) {
	return toolcore.Define(toolcore.Definition[empty]{
		Name:        toolNoopLocal,
		Description: "Do nothing, as a local activity (bench).",
		Validate:    acceptAnything,
		Execute:     noop,
		Options:     localOptions,
	})
}

// failLocalTool is failTool on the Local fast path.
func failLocalTool() (toolcore.Tool, error) {
	return toolcore.Define(toolcore.Definition[empty]{
		Name:        toolFailLocal,
		Description: "Always fail, as a local activity (bench).",
		Validate:    acceptAnything,
		Execute: func(context.Context, empty) (any, error) {
			return nil, errors.New("bench: this tool always fails")
		},
		Options: localOptions,
	})
}
