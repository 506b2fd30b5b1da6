package bench

import (
	"context"
	"errors"

	tgclient "github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// Flow-control subjects (docs/flow-control.md): what a fairness key and a rate-limited queue cost
// an unthrottled call. Compare their p50 with toolgate's.
const (
	// SubjectToolgateFairness is toolgate with every call carrying a fairness key and weight.
	SubjectToolgateFairness = "toolgate-fairness"
	// SubjectToolgateRateLimited is toolgate calling a tool with a RateLimit far above the
	// bench's rate, so it runs on a rate-limited queue of its own and is never throttled.
	SubjectToolgateRateLimited = "toolgate-ratelimited"
)

// Names and options of the rate-limited twins of the no-op and failing tools.
const (
	toolNoopLimited = "noop-limited"
	toolFailLimited = "fail-limited"
	// unthrottledRate is the limited tools' RateLimit: far above what one machine runs.
	unthrottledRate = 100000
)

var benchFairness = wire.Priority{FairnessKey: "bench-agent", FairnessWeight: 1}

func limitedToolName(kind callKind) string {
	if kind == callFail {
		return toolFailLimited
	}
	return toolNoopLimited
}

// limitedTools are noopTool and failTool with a RateLimit.
func limitedTools() ([]toolcore.Tool, error) {
	opts := toolcore.Options{RateLimit: unthrottledRate}
	noopT, err := toolcore.Define(toolcore.Definition[empty]{
		Name: toolNoopLimited, Description: "Do nothing, on a rate-limited queue (bench).",
		Validate: acceptAnything, Execute: noop, Options: opts,
	})
	if err != nil {
		return nil, err
	}
	failT, err := toolcore.Define(toolcore.Definition[empty]{
		Name: toolFailLimited, Description: "Always fail, on a rate-limited queue (bench).",
		Validate: acceptAnything, Options: opts,
		Execute: func(context.Context, empty) (any, error) {
			return nil, errors.New("bench: this tool always fails")
		},
	})
	if err != nil {
		return nil, err
	}
	return []toolcore.Tool{noopT, failT}, nil
}

// fairnessSubject is the toolgate subject of cl with benchFairness on every call.
func (h *harness) fairnessSubject(cl *tgclient.Client) subject {
	s := h.toolgateSubjectOf(SubjectToolgateFairness, cl, toolName)
	call := s.call
	s.call = func(ctx context.Context, kind callKind) (record, error) {
		return call(tgclient.WithPriority(ctx, benchFairness), kind)
	}
	return s
}
