package toolbox

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/toolgate/toolgate/toolcore"
)

// sleepArgs are sleep's validated arguments.
type sleepArgs struct {
	Seconds int64 `json:"seconds"`
}

// sleepResult is sleep's output: the seconds it slept.
type sleepResult struct {
	Seconds int64 `json:"seconds"`
}

func sleepTool(s settings) (toolcore.Tool, error) {
	return toolcore.Define(toolcore.Definition[sleepArgs]{
		Name: NameSleep,
		Description: fmt.Sprintf(`Wait {"seconds":N} whole seconds (0 to %d), reporting progress every `+
			`second; gives {"seconds":N}.`, MaxSleepSeconds),
		Validate: validateSleep,
		InputSchema: json.RawMessage(fmt.Sprintf(`{"type":"object","additionalProperties":false,"required":["seconds"],`+
			`"properties":{"seconds":{"type":"integer","minimum":0,"maximum":%d,"description":"Whole seconds to wait."}}}`, MaxSleepSeconds)),
		OutputSchema: json.RawMessage(`{"type":"object","additionalProperties":false,"required":["seconds"],` +
			`"properties":{"seconds":{"type":"integer","description":"The seconds slept."}}}`),
		Execute: func(ctx context.Context, a sleepArgs) (any, error) {
			return sleepFor(ctx, s.Ticker, a.Seconds)
		},
		Options: toolcore.Options{
			SideEffect: toolcore.ReadOnly,
			Timeout:    (MaxSleepSeconds + 60) * time.Second,
		},
	})
}

func validateSleep(args toolcore.Arguments) toolcore.Decision[sleepArgs] {
	f, reason := readFields(args, "seconds")
	if reason != "" {
		return toolcore.Reject[sleepArgs](reason)
	}
	n, present, reason := f.number("seconds")
	switch {
	case reason != "":
		return toolcore.Reject[sleepArgs](reason)
	case !present:
		return toolcore.Reject[sleepArgs](fmt.Sprintf("%q is required", "seconds"))
	}
	v, err := strconv.ParseFloat(string(n), 64)
	if err != nil || v < 0 || v > MaxSleepSeconds {
		return toolcore.Reject[sleepArgs](fmt.Sprintf("%q must be between 0 and %d", "seconds", MaxSleepSeconds))
	}
	if v != math.Trunc(v) {
		return toolcore.Reject[sleepArgs](fmt.Sprintf("%q must be a whole number of seconds", "seconds"))
	}
	return toolcore.Accept(sleepArgs{Seconds: int64(v)})
}

// sleepFor waits total ticks of one second, reporting progress after each, and returns as soon
// as ctx is done.
func sleepFor(ctx context.Context, ticker func(time.Duration) (<-chan time.Time, func()), total int64) (any, error) {
	if total == 0 {
		return sleepResult{}, nil
	}
	report := func(done int64) {
		toolcore.ReportProgress(ctx, toolcore.Progress{
			Completed: done,
			Total:     total,
			Message:   fmt.Sprintf("slept %d of %d seconds", done, total),
		})
	}
	ticks, stop := ticker(time.Second)
	defer stop()
	report(0)
	for done := int64(0); done < total; {
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("sleep: %w", context.Cause(ctx))
		case <-ticks:
			done++
			report(done)
		}
	}
	return sleepResult{Seconds: total}, nil
}
