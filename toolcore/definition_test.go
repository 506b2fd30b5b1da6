package toolcore_test

import (
	"context"
	"encoding/json"
	"io"
	"math/big"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/toolcore"
)

// defineWith defines a tool with argument type A; mutate changes a valid definition first.
func defineWith[A any](mutate func(*toolcore.Definition[A])) error {
	d := toolcore.Definition[A]{
		Name:        "tool",
		Description: "A tool.",
		Validate:    func(toolcore.Arguments) toolcore.Decision[A] { var a A; return toolcore.Accept(a) },
		Execute:     func(context.Context, A) (any, error) { return nil, nil },
	}
	if mutate != nil {
		mutate(&d)
	}
	_, err := toolcore.Define(d)
	return err
}

type emptyArgs struct{}

func TestDefineRejectsInvalidDefinitions(t *testing.T) {
	tests := []struct {
		name    string
		mutate  func(*toolcore.Definition[emptyArgs])
		wantMsg string
	}{
		{name: "empty name", mutate: func(d *toolcore.Definition[emptyArgs]) { d.Name = "" }, wantMsg: "tool name must not be blank"},
		{name: "whitespace name", mutate: func(d *toolcore.Definition[emptyArgs]) { d.Name = " \t" }, wantMsg: "tool name must not be blank"},
		{name: "name with a space", mutate: func(d *toolcore.Definition[emptyArgs]) { d.Name = "add numbers" }, wantMsg: `tool name "add numbers" must match ^[A-Za-z0-9_-]{1,64}$`},
		{name: "name with surrounding space", mutate: func(d *toolcore.Definition[emptyArgs]) { d.Name = " add" }, wantMsg: "must match"},
		{name: "name with a dot", mutate: func(d *toolcore.Definition[emptyArgs]) { d.Name = "math.add" }, wantMsg: "must match"},
		{name: "non-ASCII name", mutate: func(d *toolcore.Definition[emptyArgs]) { d.Name = "addé" }, wantMsg: "must match"},
		{name: "65-character name", mutate: func(d *toolcore.Definition[emptyArgs]) { d.Name = strings.Repeat("a", 65) }, wantMsg: "must match"},
		{name: "empty description", mutate: func(d *toolcore.Definition[emptyArgs]) { d.Description = "" }, wantMsg: `tool "tool": description must not be blank`},
		{name: "whitespace description", mutate: func(d *toolcore.Definition[emptyArgs]) { d.Description = "\n " }, wantMsg: "description must not be blank"},
		{name: "invalid UTF-8 description", mutate: func(d *toolcore.Definition[emptyArgs]) { d.Description = "bad \xff" }, wantMsg: "description must be valid UTF-8"},
		{name: "nil Execute", mutate: func(d *toolcore.Definition[emptyArgs]) { d.Execute = nil }, wantMsg: "Execute must not be nil"},
		{name: "unknown SideEffect", mutate: func(d *toolcore.Definition[emptyArgs]) { d.Options.SideEffect = 7 }, wantMsg: "unknown SideEffect 7"},
		{name: "negative Timeout", mutate: func(d *toolcore.Definition[emptyArgs]) { d.Options.Timeout = -time.Second }, wantMsg: "Timeout -1s must not be negative"},
		{name: "negative HeartbeatTimeout", mutate: func(d *toolcore.Definition[emptyArgs]) { d.Options.HeartbeatTimeout = -1 }, wantMsg: "HeartbeatTimeout -1ns must not be negative"},
		{name: "negative IdleHeartbeat", mutate: func(d *toolcore.Definition[emptyArgs]) { d.Options.IdleHeartbeat = -1 }, wantMsg: "IdleHeartbeat -1ns must not be negative"},
		{name: "IdleHeartbeat as long as the default HeartbeatTimeout", mutate: func(d *toolcore.Definition[emptyArgs]) { d.Options.IdleHeartbeat = time.Minute },
			wantMsg: "IdleHeartbeat 1m0s must be shorter than HeartbeatTimeout 1m0s"},
		{name: "IdleHeartbeat longer than HeartbeatTimeout", mutate: func(d *toolcore.Definition[emptyArgs]) {
			d.Options.HeartbeatTimeout, d.Options.IdleHeartbeat = 10*time.Second, 11*time.Second
		}, wantMsg: "IdleHeartbeat 11s must be shorter than HeartbeatTimeout 10s"},
		{name: "negative MaxAttempts", mutate: func(d *toolcore.Definition[emptyArgs]) {
			d.Options = toolcore.Options{SideEffect: toolcore.ReadOnly, MaxAttempts: -1}
		}, wantMsg: "MaxAttempts -1 must not be negative"},
		{name: "retries on an unsafe tool", mutate: func(d *toolcore.Definition[emptyArgs]) { d.Options.MaxAttempts = 3 }, wantMsg: "unsafe tools run at most once"},
		{name: "task queue with surrounding space", mutate: func(d *toolcore.Definition[emptyArgs]) { d.Options.TaskQueue = " gpu" }, wantMsg: "TaskQueue"},
		{name: "whitespace task queue", mutate: func(d *toolcore.Definition[emptyArgs]) { d.Options.TaskQueue = " " }, wantMsg: "TaskQueue"},
		{name: "Local on an unsafe tool", mutate: func(d *toolcore.Definition[emptyArgs]) { d.Options.Local = true }, wantMsg: "only ReadOnly tools may run as local activities"},
		{name: "Local on an idempotent tool", mutate: func(d *toolcore.Definition[emptyArgs]) {
			d.Options = toolcore.Options{SideEffect: toolcore.Idempotent, Local: true}
		}, wantMsg: "only ReadOnly tools"},
		{name: "Local with a task queue", mutate: func(d *toolcore.Definition[emptyArgs]) {
			d.Options = toolcore.Options{SideEffect: toolcore.ReadOnly, Local: true, TaskQueue: "gpu"}
		}, wantMsg: "a local activity runs on the workflow's worker"},
		{name: "negative RateLimit", mutate: func(d *toolcore.Definition[emptyArgs]) { d.Options.RateLimit = -1 }, wantMsg: "RateLimit -1"},
		{name: "negative FairnessKeyRateLimit", mutate: func(d *toolcore.Definition[emptyArgs]) { d.Options.FairnessKeyRateLimit = -2 }, wantMsg: "FairnessKeyRateLimit -2"},
		{name: "negative MaxConcurrent", mutate: func(d *toolcore.Definition[emptyArgs]) { d.Options.MaxConcurrent = -1 }, wantMsg: "MaxConcurrent -1"},
		{name: "Local with a rate limit", mutate: func(d *toolcore.Definition[emptyArgs]) {
			d.Options = toolcore.Options{SideEffect: toolcore.ReadOnly, Local: true, RateLimit: 5}
		}, wantMsg: "outside any task queue"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := defineWith(tt.mutate)

			var ce *toolcore.ContractError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, toolcore.CodeInvalidToolDefinition, ce.Code)
			assert.Contains(t, ce.Message, tt.wantMsg)
		})
	}
}

func TestDefineAcceptsProviderNames(t *testing.T) {
	tests := []string{"a", "add", "Add_numbers-2", strings.Repeat("x", 64), "0"}
	for _, name := range tests {
		t.Run(name, func(t *testing.T) {
			err := defineWith(func(d *toolcore.Definition[emptyArgs]) { d.Name = name })

			assert.NoError(t, err)
		})
	}
}

// withoutValidate defines a tool with argument type A, a nil Validate and the given input schema.
func withoutValidate[A any](inputSchema string) func() error {
	return func() error {
		d := toolcore.Definition[A]{
			Name:        "tool",
			Description: "A tool.",
			Execute:     func(context.Context, A) (any, error) { return nil, nil },
		}
		if inputSchema != "" {
			d.InputSchema = json.RawMessage(inputSchema)
		}
		_, err := toolcore.Define(d)
		return err
	}
}

// TestDefineRefusesUncheckedArguments: a nil Validate is fine where the input schema constrains
// the arguments (a struct argument type, or an explicit InputSchema); a generated schema that
// accepts any object ({"type":"object"}) with a nil Validate is INVALID_TOOL_DEFINITION.
func TestDefineRefusesUncheckedArguments(t *testing.T) {
	tests := []struct {
		name    string
		define  func() error
		wantMsg string // "" when Define accepts the definition
	}{
		{name: "any", define: withoutValidate[any](""), wantMsg: `tool "tool": nil Validate and the input schema generated from interface {} accepts any object`},
		{name: "Arguments", define: withoutValidate[toolcore.Arguments](""), wantMsg: "generated from toolcore.Arguments accepts any object"},
		{name: "map of any", define: withoutValidate[map[string]any](""), wantMsg: "accepts any object"},
		{name: "map of raw JSON", define: withoutValidate[map[string]json.RawMessage](""), wantMsg: "accepts any object"},
		{name: "raw JSON", define: withoutValidate[json.RawMessage](""), wantMsg: "accepts any object"},
		{name: "non-object type", define: withoutValidate[int](""), wantMsg: "give a Validate, an InputSchema, or a struct argument type"},
		{name: "struct", define: withoutValidate[schemaArgs]("")},
		{name: "pointer to struct", define: withoutValidate[*schemaArgs]("")},
		{name: "empty struct", define: withoutValidate[emptyArgs]("")},
		{name: "struct with an any field", define: withoutValidate[struct {
			X any `json:"x"`
		}]("")},
		{name: "map of integers", define: withoutValidate[map[string]int64]("")},
		{name: "explicit InputSchema", define: withoutValidate[toolcore.Arguments](`{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}`)},
		{name: "explicit object InputSchema", define: withoutValidate[json.RawMessage](`{"type":"object"}`)},
		{name: "Validate given", define: func() error { return defineWith[any](nil) }},
		{name: "Validate given for Arguments", define: func() error { return defineWith[toolcore.Arguments](nil) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.define()

			if tt.wantMsg == "" {
				assert.NoError(t, err)
				return
			}
			var ce *toolcore.ContractError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, toolcore.CodeInvalidToolDefinition, ce.Code)
			assert.Contains(t, ce.Message, tt.wantMsg)
		})
	}
}

// Argument types for TestDefineChecksArgumentTypes.
type (
	withFunc      struct{ F func() }
	withChan      struct{ C chan int }
	withComplex   struct{ C complex128 }
	withUnsafe    struct{ P unsafe.Pointer }
	withReader    struct{ R io.Reader }
	withFloatKeys struct{ M map[float64]int }
	//lint:ignore U1000 fixture: an argument type with an unexported field
	withUnexported    struct{ secret string }
	withIgnoredSecret struct {
		//lint:ignore U1000 fixture: an unexported field that encoding/json ignores
		secret string `json:"-"`
		Public string
	}
	hidden           struct{ X int }
	withEmbedded     struct{ hidden }
	withEmbeddedPtr  struct{ *hidden }
	withTime         struct{ When time.Time }
	withBig          struct{ N *big.Int }
	withAny          struct{ V any }
	withRaw          struct{ R json.RawMessage }
	withNumber       struct{ N json.Number }
	withIntKeys      struct{ M map[int]string }
	recursive        struct{ Next *recursive }
	withMutex        struct{ Mu sync.Mutex }
	marshalOnly      struct{}
	unmarshalOnly    struct{}
	textMarshalOnly  struct{}
	withMarshalOnly  struct{ M marshalOnly }
	withBadElemSlice struct{ S []chan int }
)

func (marshalOnly) MarshalJSON() ([]byte, error)     { return []byte(`1`), nil }
func (*unmarshalOnly) UnmarshalJSON([]byte) error    { return nil }
func (textMarshalOnly) MarshalText() ([]byte, error) { return []byte("x"), nil }

func TestDefineChecksArgumentTypes(t *testing.T) {
	tests := []struct {
		name    string
		define  func() error
		wantMsg string // "" means accepted
	}{
		{name: "func field", define: func() error { return defineWith[withFunc](nil) }, wantMsg: "toolcore_test.withFunc.F: func() cannot be encoded as JSON"},
		{name: "chan field", define: func() error { return defineWith[withChan](nil) }, wantMsg: "chan int cannot be encoded as JSON"},
		{name: "complex field", define: func() error { return defineWith[withComplex](nil) }, wantMsg: "complex128 cannot be encoded as JSON"},
		{name: "unsafe pointer field", define: func() error { return defineWith[withUnsafe](nil) }, wantMsg: "unsafe.Pointer cannot be encoded as JSON"},
		{name: "non-empty interface", define: func() error { return defineWith[withReader](nil) }, wantMsg: "interface io.Reader cannot be decoded from JSON"},
		{name: "float map keys", define: func() error { return defineWith[withFloatKeys](nil) }, wantMsg: "map key type float64"},
		{name: "unexported field", define: func() error { return defineWith[withUnexported](nil) }, wantMsg: "withUnexported.secret: unexported field would be lost"},
		{name: "embedded pointer to unexported struct", define: func() error { return defineWith[withEmbeddedPtr](nil) }, wantMsg: "embedded pointer to unexported struct"},
		{name: "sync.Mutex (unexported fields)", define: func() error { return defineWith[withMutex](nil) }, wantMsg: "unexported field would be lost"},
		{name: "json.Marshaler without Unmarshaler", define: func() error { return defineWith[withMarshalOnly](nil) }, wantMsg: "implements json.Marshaler but not json.Unmarshaler"},
		{name: "json.Unmarshaler without Marshaler", define: func() error { return defineWith[unmarshalOnly](nil) }, wantMsg: "implements json.Unmarshaler but not json.Marshaler"},
		{name: "TextMarshaler without TextUnmarshaler", define: func() error { return defineWith[textMarshalOnly](nil) }, wantMsg: "implements encoding.TextMarshaler but not encoding.TextUnmarshaler"},
		{name: "slice of channels", define: func() error { return defineWith[withBadElemSlice](nil) }, wantMsg: "chan int cannot be encoded"},
		{name: "top-level func", define: func() error { return defineWith[func()](nil) }, wantMsg: "func() cannot be encoded as JSON"},
		{name: "top-level non-empty interface", define: func() error { return defineWith[error](nil) }, wantMsg: "interface error cannot be decoded"},
		{name: "unexported field tagged -", define: func() error { return defineWith[withIgnoredSecret](nil) }},
		{name: "embedded unexported struct", define: func() error { return defineWith[withEmbedded](nil) }},
		{name: "time.Time", define: func() error { return defineWith[withTime](nil) }},
		{name: "*big.Int", define: func() error { return defineWith[withBig](nil) }},
		{name: "any", define: func() error { return defineWith[withAny](nil) }},
		{name: "json.RawMessage", define: func() error { return defineWith[withRaw](nil) }},
		{name: "json.Number", define: func() error { return defineWith[withNumber](nil) }},
		{name: "integer map keys", define: func() error { return defineWith[withIntKeys](nil) }},
		{name: "recursive type", define: func() error { return defineWith[recursive](nil) }},
		{name: "map[string]any", define: func() error { return defineWith[map[string]any](nil) }},
		{name: "[]byte", define: func() error { return defineWith[[]byte](nil) }},
		{name: "top-level any", define: func() error { return defineWith[any](nil) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.define()

			if tt.wantMsg == "" {
				assert.NoError(t, err)
				return
			}
			var ce *toolcore.ContractError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, toolcore.CodeInvalidToolDefinition, ce.Code)
			assert.Contains(t, ce.Message, "cannot round-trip through JSON")
			assert.Contains(t, ce.Message, tt.wantMsg)
		})
	}
}

func TestToolOptionsDefaults(t *testing.T) {
	tests := []struct {
		name string
		give toolcore.Options
		want toolcore.Options
	}{
		{
			name: "zero",
			give: toolcore.Options{},
			want: toolcore.Options{SideEffect: toolcore.Unsafe, Timeout: time.Minute, HeartbeatTimeout: time.Minute, IdleHeartbeat: 30 * time.Second, MaxAttempts: 1, ApprovalTimeout: toolcore.DefaultApprovalTimeout},
		},
		{
			name: "read-only zero",
			give: toolcore.Options{SideEffect: toolcore.ReadOnly},
			want: toolcore.Options{SideEffect: toolcore.ReadOnly, Timeout: time.Minute, HeartbeatTimeout: time.Minute, IdleHeartbeat: 30 * time.Second, MaxAttempts: 3, ApprovalTimeout: toolcore.DefaultApprovalTimeout},
		},
		{
			name: "unsafe with one attempt",
			give: toolcore.Options{MaxAttempts: 1},
			want: toolcore.Options{SideEffect: toolcore.Unsafe, Timeout: time.Minute, HeartbeatTimeout: time.Minute, IdleHeartbeat: 30 * time.Second, MaxAttempts: 1, ApprovalTimeout: toolcore.DefaultApprovalTimeout},
		},
		{
			name: "a short HeartbeatTimeout: idle beats every half of it",
			give: toolcore.Options{HeartbeatTimeout: 10 * time.Second},
			want: toolcore.Options{SideEffect: toolcore.Unsafe, Timeout: time.Minute, HeartbeatTimeout: 10 * time.Second, IdleHeartbeat: 5 * time.Second, MaxAttempts: 1, ApprovalTimeout: toolcore.DefaultApprovalTimeout},
		},
		{
			name: "a long HeartbeatTimeout: idle beats at most every 30 s",
			give: toolcore.Options{HeartbeatTimeout: 10 * time.Minute},
			want: toolcore.Options{SideEffect: toolcore.Unsafe, Timeout: time.Minute, HeartbeatTimeout: 10 * time.Minute, IdleHeartbeat: 30 * time.Second, MaxAttempts: 1, ApprovalTimeout: toolcore.DefaultApprovalTimeout},
		},
		{
			name: "all set",
			give: toolcore.Options{SideEffect: toolcore.Idempotent, Timeout: time.Hour, HeartbeatTimeout: time.Second, IdleHeartbeat: 900 * time.Millisecond, MaxAttempts: 7, TaskQueue: "gpu"},
			want: toolcore.Options{SideEffect: toolcore.Idempotent, Timeout: time.Hour, HeartbeatTimeout: time.Second, IdleHeartbeat: 900 * time.Millisecond, MaxAttempts: 7, TaskQueue: "gpu", ApprovalTimeout: toolcore.DefaultApprovalTimeout},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool, err := toolcore.Define(toolcore.Definition[emptyArgs]{
				Name:        "tool",
				Description: "A tool.",
				Validate:    func(toolcore.Arguments) toolcore.Decision[emptyArgs] { return toolcore.Accept(emptyArgs{}) },
				Execute:     func(context.Context, emptyArgs) (any, error) { return nil, nil },
				Options:     tt.give,
			})
			require.NoError(t, err)

			assert.Equal(t, tt.want, tool.Options())
		})
	}
}

func TestSideEffectString(t *testing.T) {
	tests := []struct {
		give toolcore.SideEffect
		want string
	}{
		{give: toolcore.Unsafe, want: "unsafe"},
		{give: toolcore.Idempotent, want: "idempotent"},
		{give: toolcore.ReadOnly, want: "readOnly"},
		{give: 9, want: "SideEffect(9)"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.give.String())
		})
	}
}

func TestMustDefinePanicsWithTheContractError(t *testing.T) {
	defer func() {
		ce, ok := recover().(*toolcore.ContractError)
		require.True(t, ok, "MustDefine panics with a *ContractError")
		assert.Equal(t, toolcore.CodeInvalidToolDefinition, ce.Code)
	}()
	toolcore.MustDefine(toolcore.Definition[emptyArgs]{Name: "x"})
	t.Error("MustDefine returned on an invalid definition")
}

func TestZeroTool(t *testing.T) {
	var tool toolcore.Tool
	call := contractCall(t, "x", `{}`, "call-1")

	_, rejected, ok := tool.Validate(call)
	_, invokeErr := tool.Invoke(context.Background(), json.RawMessage(`{}`))

	assert.True(t, tool.IsZero())
	assert.Empty(t, tool.Name())
	assert.Empty(t, tool.Description())
	assert.Equal(t, 1, tool.Options().MaxAttempts)
	assert.False(t, ok)
	assert.Equal(t, toolcore.CodeToolValidationFailed, rejected.ErrorCode())
	assert.Error(t, invokeErr)
}
