package faults_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"

	"github.com/toolgate/toolgate/activities"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// The error-mapping fuzz builds arbitrary error chains from a small program (wrapping, joins,
// look-alike types, panicking Error, Unwrap and As methods, cycles), has a tool return or panic
// with them inside the real ExecuteTool activity (SDK test environment), and checks the mapping
// against a model of the documented rules:
//
//   - it never panics (a PanicError from the activity is a failure);
//   - a cancellation requested by the server stays a cancellation, whatever the tool returned;
//   - only a genuine NonRecoverableToolError reachable in the chain (pre-order, skipping branches
//     whose Unwrap panics, honouring As, within 1024 errors) becomes a non-retryable
//     ApplicationError of type NonRecoverableToolError, with the text of the first one found;
//   - else a transient error of a ReadOnly tool before its last attempt is a retryable
//     TransientToolError;
//   - everything else is a TOOL_EXECUTION_FAILED result whose content is complete JSON within
//     the content cap, and whose message is bounded, valid UTF-8 and not blank.

// NonRecoverableToolError is a look-alike of toolcore's fatal error type: same name, other package.
type NonRecoverableToolError struct{ Message string }

func (e *NonRecoverableToolError) Error() string { return e.Message }

// panicText is an error whose Error method panics.
type panicText struct{}

func (panicText) Error() string { panic("Error() panicked") }

// nilDeref is an error whose method dereferences a nil receiver.
type nilDeref struct{ msg string }

func (e *nilDeref) Error() string { return e.msg }

// panicUnwrap wraps an error it never hands out: its Unwrap panics.
type panicUnwrap struct{ err error }

func (e *panicUnwrap) Error() string { return "unwrap panics" }
func (e *panicUnwrap) Unwrap() error { panic("Unwrap panicked") }

// asGenuine claims, through its As method, to be a genuine fatal error.
type asGenuine struct {
	fatal *toolcore.NonRecoverableToolError
}

func (e *asGenuine) Error() string { return "as-genuine" }
func (e *asGenuine) As(target any) bool {
	if p, ok := target.(**toolcore.NonRecoverableToolError); ok {
		*p = e.fatal
		return true
	}
	return false
}

// asPanics has an As method that panics, and wraps err.
type asPanics struct{ err error }

func (e *asPanics) Error() string      { return "as panics" }
func (e *asPanics) As(any) bool        { panic("As panicked") }
func (e *asPanics) Unwrap() error      { return e.err }
func (e *multi) Error() string         { return "multi" }
func (e *multi) Unwrap() []error       { return e.errs }
func (e *cycle) Error() string         { return "cycle" }
func (e *cycle) Unwrap() error         { return e }
func (e *chainless) Error() string     { return e.msg }
func (e *chainless) Unwrap() error     { return nil }
func (e *chainless) Timeout() bool     { return true }
func (e *chainless) Temporary() bool   { return true }
func (e *chainless) Is(err error) bool { return err == context.Canceled }

// multi wraps several errors (nil entries included).
type multi struct{ errs []error }

// cycle unwraps to itself forever.
type cycle struct{}

// chainless claims (through Is) to be context.Canceled without being a cancellation.
type chainless struct{ msg string }

// enode is one error of a built chain and what the model knows about it.
type enode struct {
	err      error
	genuine  *toolcore.NonRecoverableToolError // found when visited (a genuine error or As)
	trans    bool                              // a toolcore.Transient marker
	single   *enode                            // reachable through Unwrap() error
	many     []*enode                          // reachable through Unwrap() []error
	infinite bool                              // unwraps to itself
}

// errProgram builds an error chain from program, taking texts from text.
type errProgram struct {
	program []byte
	pos     int
	text    string
	nodes   int
}

func (p *errProgram) next() byte {
	if p.pos >= len(p.program) {
		return 0
	}
	b := p.program[p.pos]
	p.pos++
	return b
}

func (p *errProgram) str() string {
	if p.text == "" {
		return ""
	}
	n := int(p.next()) % (len(p.text) + 1)
	start := (p.pos * 7) % len(p.text)
	end := min(start+n, len(p.text))
	return p.text[start:end]
}

const maxNodes = 48

func (p *errProgram) build(depth int) *enode {
	p.nodes++
	op := p.next()
	if depth > 12 || p.nodes > maxNodes {
		op %= 12 // leaves only
	}
	switch op % 22 {
	case 0:
		return &enode{err: errors.New(p.str())}
	case 1:
		f := toolcore.NewNonRecoverableToolError(p.str())
		return &enode{err: f, genuine: f}
	case 2:
		return &enode{err: &toolcore.NonRecoverableToolError{}}
	case 3:
		return &enode{err: temporal.NewNonRetryableApplicationError(p.str(), wire.ErrTypeNonRecoverable, nil)}
	case 4:
		return &enode{err: &NonRecoverableToolError{Message: p.str()}}
	case 5:
		return &enode{err: &toolcore.ContractError{Code: toolcore.CodeInvalidToolCall, Message: p.str()}}
	case 6:
		return &enode{err: panicText{}}
	case 7:
		return &enode{err: (*nilDeref)(nil)}
	case 8:
		return &enode{err: context.Canceled}
	case 9:
		return &enode{err: temporal.NewCanceledError(p.str())}
	case 10:
		return &enode{err: errors.New(strings.Repeat(p.str()+"\xff<\u2028", 3000))}
	case 11:
		return &enode{err: temporal.NewApplicationError(p.str(), wire.ErrTypeTransient)}
	case 12:
		kid := p.build(depth + 1)
		return &enode{err: fmt.Errorf("%s: %w", p.str(), kid.err), single: kid}
	case 13:
		a, b := p.build(depth+1), p.build(depth+1)
		return &enode{err: errors.Join(a.err, b.err), many: []*enode{a, b}}
	case 14:
		kid := p.build(depth + 1)
		// The marker and its text are one node in the chain: Transient wraps kid.
		return &enode{err: toolcore.Transient(kid.err), trans: true, single: kid}
	case 15:
		kid := p.build(depth + 1)
		f := toolcore.WrapNonRecoverable(kid.err, p.str())
		return &enode{err: f, genuine: f, single: kid}
	case 16:
		kid := p.build(depth + 1)
		return &enode{err: &panicUnwrap{err: kid.err}}
	case 17:
		f := toolcore.NewNonRecoverableToolError(p.str())
		return &enode{err: &asGenuine{fatal: f}, genuine: f}
	case 18:
		kid := p.build(depth + 1)
		return &enode{err: &asPanics{err: kid.err}, single: kid}
	case 19:
		a, b := p.build(depth+1), p.build(depth+1)
		return &enode{err: &multi{errs: []error{a.err, nil, b.err}}, many: []*enode{a, b}}
	case 20:
		return &enode{err: &cycle{}, infinite: true}
	default:
		return &enode{err: &chainless{msg: p.str()}}
	}
}

// chainBudget is toolcore's bound on the errors one chain walk visits.
const chainBudget = 1024

// walk visits the model of a chain in the documented order (pre-order, joined errors before
// the single chain), within the budget; visit returning true stops it.
func walk(n *enode, visit func(*enode) bool) {
	budget := chainBudget
	var rec func(*enode) bool
	rec = func(e *enode) bool {
		for e != nil {
			if budget <= 0 {
				return false
			}
			budget--
			if visit(e) {
				return true
			}
			if e.infinite {
				budget = 0
				return false
			}
			for _, m := range e.many {
				if rec(m) {
					return true
				}
			}
			e = e.single
		}
		return false
	}
	rec(n)
}

// errMapRig runs ExecuteTool in the SDK's test environment with a tool that returns (or panics
// with) the error registered for its call ID.
type errMapRig struct {
	reg   *toolcore.Registry
	errs  sync.Map // call ID -> errCase
	calls atomic.Int64
	suite testsuite.WorkflowTestSuite
}

type errCase struct {
	err    error
	panics bool
	cancel func(error) // cancels the activity's context as the server would, or nil
}

func newErrMapRig(t testing.TB) *errMapRig {
	r := &errMapRig{}
	r.suite.SetLogger(sdklog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	run := func(ctx context.Context, _ struct{}) (any, error) {
		v, _ := r.errs.Load(toolcore.ToolCallID(ctx))
		c := v.(errCase)
		if c.cancel != nil {
			c.cancel(temporal.NewCanceledError())
		}
		if c.panics {
			panic(c.err)
		}
		return nil, c.err
	}
	accept := func(toolcore.Arguments) toolcore.Decision[struct{}] { return toolcore.Accept(struct{}{}) }
	var tools []toolcore.Tool
	for _, d := range []struct {
		name string
		opts toolcore.Options
	}{
		{"unsafe", toolcore.Options{}},
		{"readonly", toolcore.Options{SideEffect: toolcore.ReadOnly, MaxAttempts: 3}},
	} {
		tools = append(tools, toolcore.MustDefine(toolcore.Definition[struct{}]{
			Name: d.name, Description: "returns the fuzzed error", Validate: accept, Execute: run, Options: d.opts,
		}))
	}
	reg, err := toolcore.NewRegistry(tools...)
	require.NoError(t, err)
	r.reg = reg
	return r
}

// run executes one attempt with c and returns the activity's output and error.
func (r *errMapRig) run(t testing.TB, tool string, maxAttempts int, c errCase, cancelable bool) (activities.ExecuteToolOutput, error) {
	id := fmt.Sprintf("fuzz-%d", r.calls.Add(1))
	env := r.suite.NewTestActivityEnvironment()
	if cancelable {
		parent, cancel := context.WithCancelCause(context.Background())
		defer cancel(nil)
		c.cancel = cancel
		env.SetWorkerOptions(worker.Options{BackgroundActivityContext: parent})
	}
	r.errs.Store(id, c)
	defer r.errs.Delete(id)
	(&activities.Activities{Registry: r.reg}).Register(env)
	val, err := env.ExecuteActivity(wire.ExecuteToolName, activities.ExecuteToolInput{
		ToolCallID: id, ToolName: tool, Accepted: json.RawMessage(`{}`), IdempotencyKey: "toolcall-" + id, MaxAttempts: maxAttempts,
	})
	if err != nil {
		return activities.ExecuteToolOutput{}, err
	}
	var out activities.ExecuteToolOutput
	require.NoError(t, val.Get(&out))
	return out, nil
}

// checkBounded asserts a model-visible message is valid UTF-8, not blank, and within the bound.
func checkBounded(t *testing.T, what, msg string) {
	t.Helper()
	assert.True(t, utf8.ValidString(msg), "%s is not UTF-8: %q", what, msg)
	assert.NotEmpty(t, strings.TrimSpace(msg), "%s is blank", what)
	assert.LessOrEqual(t, utf8.RuneCountInString(msg), toolcore.MaxErrorTextCodePoints, "%s is too long", what)
}

func FuzzErrorMapping(f *testing.F) {
	seeds := []struct {
		program []byte
		text    string
		mode    uint8
	}{
		{[]byte{0}, "plain", 0},
		{[]byte{1}, "genuine fatal", 0},
		{[]byte{1}, "genuine fatal, panicked", 1},
		{[]byte{2}, "", 0},
		{[]byte{3}, "application look-alike", 0},
		{[]byte{4}, "same-named look-alike", 0},
		{[]byte{13, 2, 15, 0}, "joined literal before a wrapped genuine", 0},
		{[]byte{14, 0}, "transient of a read-only tool", 6},
		{[]byte{14, 1}, "transient over a genuine", 6},
		{[]byte{16, 1}, "genuine behind a panicking Unwrap", 0},
		{[]byte{17}, "genuine through As", 0},
		{[]byte{18, 1}, "genuine behind a panicking As", 0},
		{[]byte{13, 20, 1}, "genuine after a cycle", 0},
		{[]byte{19, 6, 7}, "panicking texts", 0},
		{[]byte{10}, "huge", 0},
		{[]byte{1}, "canceled by the server", 8},
		{[]byte{14, 0}, "transient canceled", 14},
		{[]byte{9}, "tool returns a canceled error unasked", 0},
		{[]byte{21}, "claims to be context.Canceled", 0},
	}
	for _, s := range seeds {
		f.Add(s.program, s.text, s.mode)
	}
	rig := newErrMapRig(f)
	f.Fuzz(func(t *testing.T, program []byte, text string, mode uint8) {
		p := &errProgram{program: program, text: text}
		root := p.build(0)
		panics, readOnly, lastAttempt, cancel := mode&1 != 0, mode&2 != 0, mode&4 == 0, mode&8 != 0
		tool, maxAttempts := "unsafe", 1
		if readOnly {
			tool = "readonly"
		}
		if !lastAttempt {
			maxAttempts = 3
		}
		model := root
		if panics {
			// Invoke recovers the panic into a PanicError that wraps an error value.
			model = &enode{err: root.err, single: root}
		}
		var fatal *toolcore.NonRecoverableToolError
		walk(model, func(e *enode) bool {
			fatal = e.genuine
			return fatal != nil
		})
		transient := false
		walk(model, func(e *enode) bool {
			transient = e.trans
			return transient
		})

		out, err := rig.run(t, tool, maxAttempts, errCase{err: root.err, panics: panics}, cancel)

		var panicErr *temporal.PanicError
		require.False(t, errors.As(err, &panicErr), "the activity panicked: %v", err)
		var appErr *temporal.ApplicationError
		switch {
		case cancel:
			assert.True(t, temporal.IsCanceledError(err), "a server cancel stays a cancellation, got %v / %+v", err, out)
		case fatal != nil:
			require.ErrorAs(t, err, &appErr, "want the fatal ApplicationError, got %+v", out)
			assert.Equal(t, wire.ErrTypeNonRecoverable, appErr.Type())
			assert.True(t, appErr.NonRetryable())
			assert.Equal(t, toolcore.ErrorText(fatal), appErr.Message(), "the first genuine error's text")
			checkBounded(t, "fatal message", appErr.Message())
		case transient && readOnly && !lastAttempt:
			require.ErrorAs(t, err, &appErr, "want the transient ApplicationError, got %+v", out)
			assert.Equal(t, wire.ErrTypeTransient, appErr.Type())
			assert.False(t, appErr.NonRetryable())
			checkBounded(t, "transient message", appErr.Message())
		default:
			require.NoError(t, err, "want a result")
			assert.True(t, out.IsError)
			assert.LessOrEqual(t, utf8.RuneCountInString(out.Content), toolcore.MaxContentCodePoints)
			var body struct {
				Error struct {
					Code    string `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			require.NoError(t, json.Unmarshal([]byte(out.Content), &body), out.Content)
			assert.Equal(t, toolcore.CodeToolExecutionFailed.String(), body.Error.Code)
			checkBounded(t, "result message", body.Error.Message)
		}
		if appErr != nil && appErr.Type() == wire.ErrTypeNonRecoverable {
			assert.NotNil(t, fatal, "only a genuine fatal error maps to %s", wire.ErrTypeNonRecoverable)
		}
	})
}
