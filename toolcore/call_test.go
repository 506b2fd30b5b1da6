package toolcore

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// requireInvalidCall asserts err is a *ContractError with CodeInvalidToolCall and returns its
// message.
func requireInvalidCall(t *testing.T, err error) string {
	t.Helper()
	var ce *ContractError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, CodeInvalidToolCall, ce.Code)
	return ce.Message
}

// nested returns an arguments object nesting depth levels (the object itself is level 1).
func nested(depth int) string {
	return strings.Repeat(`{"a":`, depth-1) + "{}" + strings.Repeat("}", depth-1)
}

func wireCall(args string) string {
	return `{"type":"toolCall","id":"call-1","name":"add","arguments":` + args + `}`
}

func TestParseToolCallAccepts(t *testing.T) {
	tests := []struct {
		name     string
		give     string
		wantID   string
		wantName string
		wantArgs string
	}{
		{
			name:     "wire shape",
			give:     `{"type":"toolCall","id":"call-add-1","name":"add","arguments":{"left":20,"right":22}}`,
			wantID:   "call-add-1",
			wantName: "add",
			wantArgs: `{"left":20,"right":22}`,
		},
		{
			name:     "whitespace and member order",
			give:     " \t\r\n{ \"arguments\" : { \"right\" : 22 , \"left\" : 20 } , \"name\":\"add\",\"id\":\"c\",\"type\":\"toolCall\" }\n",
			wantID:   "c",
			wantName: "add",
			wantArgs: `{"left":20,"right":22}`,
		},
		{
			name:     "unknown top-level members are dropped",
			give:     `{"type":"toolCall","id":"c","name":"add","arguments":{},"thoughtSignature":"abc","meta":{"x":[1,{"y":null}]}}`,
			wantID:   "c",
			wantName: "add",
			wantArgs: `{}`,
		},
		{
			name:     "member names are case-sensitive: ID is an unknown member",
			give:     `{"type":"toolCall","id":"c","ID":"other","name":"add","arguments":{}}`,
			wantID:   "c",
			wantName: "add",
			wantArgs: `{}`,
		},
		{
			name:     "escapes in envelope strings are decoded",
			give:     `{"type":"toolCal\u006c","id":"call\u002d1 \"q\" \\","name":"\u0061dd","arguments":{}}`,
			wantID:   `call-1 "q" \`,
			wantName: "add",
			wantArgs: `{}`,
		},
		{
			name:     "non-ASCII id and name",
			give:     `{"type":"toolCall","id":"呼叫-1","name":"добавить","arguments":{}}`,
			wantID:   "呼叫-1",
			wantName: "добавить",
			wantArgs: `{}`,
		},
		{
			name:     "nested objects sorted at every level, arrays keep order",
			give:     wireCall(`{"b":{"z":1,"y":[{"q":1,"p":2},3]},"a":true,"c":null}`),
			wantID:   "call-1",
			wantName: "add",
			wantArgs: `{"a":true,"b":{"y":[{"p":2,"q":1},3],"z":1},"c":null}`,
		},
		{
			name:     "keys sorted by unescaped bytes",
			give:     wireCall(`{"\u00e9":1,"z":2,"\"":3,"A":4,"\u0000":5,"😀":6,"ｚ":7}`),
			wantID:   "call-1",
			wantName: "add",
			wantArgs: `{"\u0000":5,"\"":3,"A":4,"z":2,"é":1,"ｚ":7,"😀":6}`,
		},
		{
			name:     "number literals kept exactly",
			give:     wireCall(`{"a":1.0,"b":1e3,"c":-0,"d":12345678901234567890123,"e":1E-7,"f":0.1,"g":-1.5e+300}`),
			wantID:   "call-1",
			wantName: "add",
			wantArgs: `{"a":1.0,"b":1e3,"c":-0,"d":12345678901234567890123,"e":1E-7,"f":0.1,"g":-1.5e+300}`,
		},
		{
			name:     "strings re-escaped minimally",
			give:     wireCall(`{"s":"\u00e9\/\b\f\n\r\t\u0001\u001f\u007f\u2028\u2029<>&\ud83d\ude00\"\\"}`),
			wantID:   "call-1",
			wantName: "add",
			wantArgs: "{\"s\":\"é/\\b\\f\\n\\r\\t\\u0001\\u001f\u007f\u2028\u2029<>&😀\\\"\\\\\"}",
		},
		{
			name:     "raw UTF-8 kept",
			give:     wireCall("{\"s\":\"é\u2028😀\u007f\"}"),
			wantID:   "call-1",
			wantName: "add",
			wantArgs: "{\"s\":\"é\u2028😀\u007f\"}",
		},
		{
			name:     "NUL escape allowed in arguments",
			give:     wireCall(`{"s":"a\u0000b"}`),
			wantID:   "call-1",
			wantName: "add",
			wantArgs: `{"s":"a\u0000b"}`,
		},
		{
			name:     "arguments at the depth limit",
			give:     wireCall(nested(MaxArgumentsDepth)),
			wantID:   "call-1",
			wantName: "add",
			wantArgs: nested(MaxArgumentsDepth),
		},
		{
			name:     "id at the byte limit, spaces inside",
			give:     `{"type":"toolCall","id":"` + strings.Repeat("x y", MaxIDBytes/3) + `z","name":"n","arguments":{}}`,
			wantID:   strings.Repeat("x y", MaxIDBytes/3) + "z",
			wantName: "n",
			wantArgs: `{}`,
		},
		{
			name:     "blank-looking characters beside visible ones",
			give:     `{"type":"toolCall","id":"e\u0301\u3164x\u2800","name":"n","arguments":{}}`,
			wantID:   "e\u0301\u3164x\u2800",
			wantName: "n",
			wantArgs: `{}`,
		},
		{
			name:     "name at the byte limit, not a valid registered name",
			give:     `{"type":"toolCall","id":"c","name":"` + strings.Repeat("é", MaxNameBytes/2) + `","arguments":{}}`,
			wantID:   "c",
			wantName: strings.Repeat("é", MaxNameBytes/2),
			wantArgs: `{}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ParseToolCall([]byte(tt.give))
			require.NoError(t, err)
			assert.Equal(t, tt.wantID, c.ID())
			assert.Equal(t, tt.wantName, c.Name())
			assert.Equal(t, tt.wantArgs, string(c.Arguments().Raw()))
			assert.False(t, c.IsZero())

			out, err := c.MarshalJSON()
			require.NoError(t, err)
			assert.LessOrEqual(t, len(out), len(tt.give), "canonical form is never longer than the input")
			again, err := ParseToolCall(out)
			require.NoError(t, err)
			assert.Equal(t, c, again)
		})
	}
}

func TestParseToolCallAtSizeLimit(t *testing.T) {
	pad := MaxCallBytes - len(wireCall(`{"s":""}`))
	exact := wireCall(`{"s":"` + strings.Repeat("a", pad) + `"}`)
	require.Len(t, exact, MaxCallBytes)

	c, err := ParseToolCall([]byte(exact))
	require.NoError(t, err)
	s, err := c.Arguments().String("s")
	require.NoError(t, err)
	assert.Len(t, s, pad)

	_, err = ParseToolCall([]byte(exact + " "))
	assert.Equal(t, "tool call: 262145 bytes, limit 262144", requireInvalidCall(t, err))
}

func TestParseToolCallRejects(t *testing.T) {
	tests := []struct {
		name string
		give string
		want string
	}{
		// Not a JSON object.
		{"empty", ``, `tool call: empty input, want a JSON object`},
		{"only whitespace", " \n\t", `tool call: empty input, want a JSON object`},
		{"array", `[{"type":"toolCall"}]`, `tool call: must be a JSON object, got array`},
		{"string", `"toolCall"`, `tool call: must be a JSON object, got string`},
		{"number", `42`, `tool call: must be a JSON object, got number`},
		{"null", `null`, `tool call: must be a JSON object, got null`},
		{"garbage", `toolCall`, `tool call: invalid JSON at byte 0: invalid literal, want true`},
		{"invalid value", `"\ud800"`, `tool call: lone surrogate \ud800 at byte 1 (not a Unicode character)`},
		{"deep array", strings.Repeat("[", 100) + strings.Repeat("]", 100), `tool call: must be a JSON object, got array`},
		{"array with duplicates", `[{"a":1,"a":2}]`, `tool call: must be a JSON object, got array`},
		{"malformed array", `[{"a":1,}]`, `tool call: invalid JSON at byte 8: unexpected '}', want a string key`},
		{"BOM", "\ufeff{}", `tool call: invalid JSON at byte 0: unexpected byte 0xef, want a value`},

		// Malformed JSON.
		{"truncated", `{"type":"toolCall","id":"c"`, `tool call: invalid JSON at byte 27: unexpected end of input after object member, want ',' or '}'`},
		{"truncated in arguments", wireCall(`{"a":[1,2`)[:len(wireCall(`{"a":[1,2`))-1], `tool call: invalid JSON at byte 67: unexpected end of input after array element, want ',' or ']'`},
		{"trailing data", wireCall(`{}`) + `{}`, `tool call: invalid JSON at byte 61: unexpected '{' after the tool call object`},
		{"trailing comma", wireCall(`{"a":1,}`), `tool call: invalid JSON at byte 65: unexpected '}', want a string key`},
		{"single quotes", wireCall(`{'a':1}`), `tool call: invalid JSON at byte 59: unexpected '\'', want a string key`},
		{"missing colon", wireCall(`{"a" 1}`), `tool call: invalid JSON at byte 63: unexpected '1' after object key, want ':'`},
		{"leading zero", wireCall(`{"a":01}`), `tool call: invalid JSON at byte 64: unexpected '1' after object member, want ',' or '}'`},
		{"bare decimal point", wireCall(`{"a":1.}`), `tool call: invalid JSON at byte 65: unexpected '}' after decimal point, want a digit`},
		{"empty exponent", wireCall(`{"a":1e}`), `tool call: invalid JSON at byte 65: unexpected '}' in exponent, want a digit`},
		{"plus sign", wireCall(`{"a":+1}`), `tool call: invalid JSON at byte 63: unexpected '+', want a value`},
		{"NaN", wireCall(`{"a":NaN}`), `tool call: invalid JSON at byte 63: unexpected 'N', want a value`},
		{"bad literal", wireCall(`{"a":tru}`), `tool call: invalid JSON at byte 63: invalid literal, want true`},
		{"comment", wireCall(`{/*x*/}`), `tool call: invalid JSON at byte 59: unexpected '/', want a string key`},
		{"raw newline in string", wireCall("{\"a\":\"x\ny\"}"), `tool call: invalid JSON at byte 65: control character U+000A in string, want it escaped`},
		{"bad escape", wireCall(`{"a":"\x41"}`), `tool call: invalid JSON at byte 64: invalid escape 'x' in string`},
		{"short unicode escape", wireCall(`{"a":"\u12"}`), `tool call: invalid JSON at byte 64: invalid \u escape in string, want 4 hex digits`},
		{"unterminated string", `{"type":"toolCall","id":"c`, `tool call: invalid JSON at byte 26: unexpected end of input in string`},

		// Unicode.
		{"invalid UTF-8 in arguments", wireCall("{\"a\":\"\xff\"}"), `tool call: invalid UTF-8 at byte 64`},
		{"invalid UTF-8 in a key", wireCall("{\"\xc3\":1}"), `tool call: invalid UTF-8 at byte 60`},
		{"UTF-8 encoded surrogate", wireCall("{\"a\":\"\xed\xa0\x80\"}"), `tool call: invalid UTF-8 at byte 64`},
		{"overlong UTF-8", wireCall("{\"a\":\"\xc0\xaf\"}"), `tool call: invalid UTF-8 at byte 64`},
		{"lone high surrogate", wireCall(`{"a":"\ud83d"}`), `tool call: lone surrogate \ud83d at byte 64 (not a Unicode character)`},
		{"lone low surrogate", wireCall(`{"a":"\ude00"}`), `tool call: lone surrogate \ude00 at byte 64 (not a Unicode character)`},
		{"high surrogate then letter", wireCall(`{"a":"\ud83dx"}`), `tool call: lone surrogate \ud83d at byte 64 (not a Unicode character)`},
		{"two high surrogates", wireCall(`{"a":"\ud83d\ud83d"}`), `tool call: lone surrogate \ud83d at byte 64 (not a Unicode character)`},
		{"lone surrogate in a key", wireCall(`{"\udfff":1}`), `tool call: lone surrogate \udfff at byte 60 (not a Unicode character)`},
		{"lone surrogate in an unknown member", `{"x":"\ud800","type":"toolCall","id":"c","name":"n","arguments":{}}`, `tool call: lone surrogate \ud800 at byte 6 (not a Unicode character)`},

		// Duplicate keys, at any depth, compared after unescaping.
		{"duplicate top-level key", `{"type":"toolCall","id":"a","id":"b","name":"n","arguments":{}}`, `tool call: duplicate key "id"`},
		{"duplicate unknown top-level key", `{"x":1,"type":"toolCall","id":"a","name":"n","arguments":{},"x":2}`, `tool call: duplicate key "x"`},
		{"duplicate arguments", `{"type":"toolCall","id":"a","name":"n","arguments":{},"arguments":{"a":1}}`, `tool call: duplicate key "arguments"`},
		{"duplicate in arguments", wireCall(`{"left":1,"right":2,"left":3}`), `tool call: duplicate key "left" in arguments`},
		{"duplicate by escape", wireCall(`{"left":1,"l\u0065ft":3}`), `tool call: duplicate key "left" in arguments`},
		{"duplicate nested", wireCall(`{"point":{"x":1,"y":2,"x":3}}`), `tool call: duplicate key "x" in arguments.point`},
		{"duplicate in array element", wireCall(`{"items":[{},{"k":1,"k":1}]}`), `tool call: duplicate key "k" in arguments.items[1]`},
		{"duplicate under odd key", wireCall(`{"a b":{"q":[[{"z":0,"z":0}]]}}`), `tool call: duplicate key "z" in arguments["a b"].q[0][0]`},
		{"duplicate in unknown member", `{"meta":{"k":1,"k":2},"type":"toolCall","id":"a","name":"n","arguments":{}}`, `tool call: duplicate key "k" in meta`},

		// Bounds.
		{"arguments too deep", wireCall(nested(MaxArgumentsDepth + 1)), `tool call: arguments nests deeper than 64 levels (at byte 378)`},
		{"arrays count as levels", wireCall(`{"a":` + strings.Repeat("[", MaxArgumentsDepth) + strings.Repeat("]", MaxArgumentsDepth) + `}`), `tool call: arguments nests deeper than 64 levels (at byte 126)`},
		{"unknown member too deep", `{"meta":` + strings.Repeat("[", MaxArgumentsDepth+1) + strings.Repeat("]", MaxArgumentsDepth+1) + `}`, `tool call: meta nests deeper than 64 levels (at byte 72)`},

		// The envelope.
		{"missing type", `{"id":"c","name":"n","arguments":{}}`, `tool call: missing "type"`},
		{"wrong type", `{"type":"function","id":"c","name":"n","arguments":{}}`, `tool call: "type" must be "toolCall", got "function"`},
		{"type case", `{"type":"toolcall","id":"c","name":"n","arguments":{}}`, `tool call: "type" must be "toolCall", got "toolcall"`},
		{"type not a string", `{"type":1,"id":"c","name":"n","arguments":{}}`, `tool call: "type" must be a string, got number`},
		{"long wrong type is clipped", `{"type":"` + strings.Repeat("x", 100) + `","id":"c","name":"n","arguments":{}}`, `tool call: "type" must be "toolCall", got "` + strings.Repeat("x", 64) + `"...`},
		{"Type is not type", `{"Type":"toolCall","id":"c","name":"n","arguments":{}}`, `tool call: missing "type"`},
		{"missing id", `{"type":"toolCall","name":"n","arguments":{}}`, `tool call: missing "id"`},
		{"id null", `{"type":"toolCall","id":null,"name":"n","arguments":{}}`, `tool call: "id" must be a string, got null`},
		{"id number", `{"type":"toolCall","id":7,"name":"n","arguments":{}}`, `tool call: "id" must be a string, got number`},
		{"id empty", `{"type":"toolCall","id":"","name":"n","arguments":{}}`, `tool call: "id" must not be blank`},
		{"id blank", `{"type":"toolCall","id":" \u00a0\u3000 ","name":"n","arguments":{}}`, `tool call: "id" must not be blank`},
		{"id Hangul filler", `{"type":"toolCall","id":"\u3164","name":"n","arguments":{}}`, `tool call: "id" must not be blank`},
		{"id Hangul fillers and space", `{"type":"toolCall","id":"\u115f \u1160\uffa0","name":"n","arguments":{}}`, `tool call: "id" must not be blank`},
		{"id Braille blank", `{"type":"toolCall","id":"\u2800\u2800","name":"n","arguments":{}}`, `tool call: "id" must not be blank`},
		{"id combining marks only", `{"type":"toolCall","id":"\u0301\u0308\u20dd","name":"n","arguments":{}}`, `tool call: "id" must not be blank`},
		{"id variation selectors only", `{"type":"toolCall","id":"\ufe0f\udb40\udd00","name":"n","arguments":{}}`, `tool call: "id" must not be blank`},
		{"name Hangul filler", `{"type":"toolCall","id":"c","name":"\u3164","arguments":{}}`, `tool call: "name" must not be blank`},
		{"id too long", `{"type":"toolCall","id":"` + strings.Repeat("x", MaxIDBytes+1) + `","name":"n","arguments":{}}`, `tool call: "id" is 257 bytes, limit 256`},
		{"id with newline", `{"type":"toolCall","id":"a\nb","name":"n","arguments":{}}`, `tool call: "id" contains control or invisible character U+000A at byte 1`},
		{"id with tab", `{"type":"toolCall","id":"\ta","name":"n","arguments":{}}`, `tool call: "id" contains control or invisible character U+0009 at byte 0`},
		{"id with NUL", `{"type":"toolCall","id":"a\u0000","name":"n","arguments":{}}`, `tool call: "id" contains control or invisible character U+0000 at byte 1`},
		{"id with DEL", `{"type":"toolCall","id":"a\u007f","name":"n","arguments":{}}`, `tool call: "id" contains control or invisible character U+007F at byte 1`},
		{"id with C1 control", `{"type":"toolCall","id":"a\u0085","name":"n","arguments":{}}`, `tool call: "id" contains control or invisible character U+0085 at byte 1`},
		{"id with line separator", `{"type":"toolCall","id":"a\u2028","name":"n","arguments":{}}`, `tool call: "id" contains control or invisible character U+2028 at byte 1`},
		{"id with paragraph separator", "{\"type\":\"toolCall\",\"id\":\"a\u2029\",\"name\":\"n\",\"arguments\":{}}", `tool call: "id" contains control or invisible character U+2029 at byte 1`},
		{"id with bidi override", `{"type":"toolCall","id":"a\u202eb","name":"n","arguments":{}}`, `tool call: "id" contains control or invisible character U+202E at byte 1`},
		{"id with zero-width space", `{"type":"toolCall","id":"a\u200bb","name":"n","arguments":{}}`, `tool call: "id" contains control or invisible character U+200B at byte 1`},
		{"id with BOM", `{"type":"toolCall","id":"\ufeffa","name":"n","arguments":{}}`, `tool call: "id" contains control or invisible character U+FEFF at byte 0`},
		{"id with tag character", `{"type":"toolCall","id":"a\udb40\udc41","name":"n","arguments":{}}`, `tool call: "id" contains control or invisible character U+E0041 at byte 1`},
		{"missing name", `{"type":"toolCall","id":"c","arguments":{}}`, `tool call: missing "name"`},
		{"name array", `{"type":"toolCall","id":"c","name":["add"],"arguments":{}}`, `tool call: "name" must be a string, got array`},
		{"name blank", `{"type":"toolCall","id":"c","name":"  ","arguments":{}}`, `tool call: "name" must not be blank`},
		{"name too long", `{"type":"toolCall","id":"c","name":"` + strings.Repeat("n", MaxNameBytes+1) + `","arguments":{}}`, `tool call: "name" is 257 bytes, limit 256`},
		{"name with control", `{"type":"toolCall","id":"c","name":"add\r","arguments":{}}`, `tool call: "name" contains control or invisible character U+000D at byte 3`},
		{"missing arguments", `{"type":"toolCall","id":"c","name":"n"}`, `tool call: missing "arguments"`},
		{"arguments array", wireCall(`[1,2]`), `tool call: "arguments" must be a JSON object, got array`},
		{"arguments string", wireCall(`"{\"left\":1}"`), `tool call: "arguments" must be a JSON object, got string`},
		{"arguments null", wireCall(`null`), `tool call: "arguments" must be a JSON object, got null`},
		{"empty object", `{}`, `tool call: missing "type"`},
		{"checks run in wire order", `{"arguments":[],"name":1,"id":2,"type":3}`, `tool call: "type" must be a string, got number`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ParseToolCall([]byte(tt.give))
			assert.Equal(t, tt.want, requireInvalidCall(t, err))
			assert.True(t, c.IsZero())
		})
	}
}

func TestNewToolCall(t *testing.T) {
	c, err := NewToolCall("call-1", "add", []byte(" {\"right\":22,\n\"left\":20} "))
	require.NoError(t, err)
	assert.Equal(t, "call-1", c.ID())
	assert.Equal(t, "add", c.Name())
	assert.Equal(t, `{"left":20,"right":22}`, string(c.Arguments().Raw()))

	out, err := c.MarshalJSON()
	require.NoError(t, err)
	assert.Equal(t, `{"type":"toolCall","id":"call-1","name":"add","arguments":{"left":20,"right":22}}`, string(out))
}

func TestNewToolCallRejects(t *testing.T) {
	atLimit := `{"s":"` + strings.Repeat("a", MaxCallBytes-len(wireCall(`{"s":""}`))) + `"}`
	tests := []struct {
		name   string
		id     string
		toolID string
		args   string
		want   string
	}{
		{"blank id", " ", "add", `{}`, `tool call: "id" must not be blank`},
		{"blank-looking id", "\u3164\u2800\u0301", "add", `{}`, `tool call: "id" must not be blank`},
		{"empty name", "c", "", `{}`, `tool call: "name" must not be blank`},
		{"invalid UTF-8 id", "a\xff", "add", `{}`, `tool call: "id" is not valid UTF-8 (at byte 1)`},
		{"surrogate bytes in name", "c", "\xed\xa0\x80", `{}`, `tool call: "name" is not valid UTF-8 (at byte 0)`},
		{"id with control", "a\x1b[31m", "add", `{}`, `tool call: "id" contains control or invisible character U+001B at byte 1`},
		{"id too long", strings.Repeat("x", MaxIDBytes+1), "add", `{}`, `tool call: "id" is 257 bytes, limit 256`},
		{"nil arguments", "c", "add", ``, `tool call: arguments must be a JSON object, got empty input`},
		{"array arguments", "c", "add", `[]`, `tool call: arguments must be a JSON object, got array`},
		{"deep array arguments", "c", "add", strings.Repeat("[", 100) + strings.Repeat("]", 100), `tool call: arguments must be a JSON object, got array`},
		{"malformed array arguments", "c", "add", `[1,]`, `tool call: invalid JSON at byte 3 of arguments: unexpected ']', want a value`},
		{"not JSON", "c", "add", `left=1`, `tool call: invalid JSON at byte 0 of arguments: unexpected 'l', want a value`},
		{"trailing data", "c", "add", `{} x`, `tool call: invalid JSON at byte 3 of arguments: unexpected 'x' after the object`},
		{"duplicate", "c", "add", `{"a":{"b":1,"b":2}}`, `tool call: duplicate key "b" in arguments.a`},
		{"lone surrogate", "c", "add", `{"a":"\udc00"}`, `tool call: lone surrogate \udc00 at byte 6 of arguments (not a Unicode character)`},
		{"too deep", "c", "add", nested(MaxArgumentsDepth + 1), `tool call: arguments nests deeper than 64 levels (at byte 320 of arguments)`},
		{"arguments too large", "c", "add", `{"s":"` + strings.Repeat("a", MaxCallBytes) + `"}`, `tool call: arguments are 262152 bytes, limit 262144`},
		{"encoded call too large", "call-12", "add", atLimit, `tool call: encodes to 262145 bytes, limit 262144`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := NewToolCall(tt.id, tt.toolID, []byte(tt.args))
			assert.Equal(t, tt.want, requireInvalidCall(t, err))
			assert.True(t, c.IsZero())
		})
	}
}

func TestNewToolCallAtEncodedLimit(t *testing.T) {
	args := `{"s":"` + strings.Repeat("a", MaxCallBytes-len(wireCall(`{"s":""}`))) + `"}`
	c, err := NewToolCall("call-1", "add", []byte(args))
	require.NoError(t, err)
	out, err := c.MarshalJSON()
	require.NoError(t, err)
	assert.Len(t, out, MaxCallBytes)
	again, err := ParseToolCall(out)
	require.NoError(t, err)
	assert.Equal(t, c, again)
}

func TestToolCallSnapshotIsImmutable(t *testing.T) {
	input := []byte(`{"type":"toolCall","id":"call-1","name":"add","arguments":{"left":20,"s":"x"}}`)
	c, err := ParseToolCall(input)
	require.NoError(t, err)
	for i := range input {
		input[i] = 'X'
	}
	assert.Equal(t, "call-1", c.ID())
	assert.Equal(t, "add", c.Name())
	assert.Equal(t, `{"left":20,"s":"x"}`, string(c.Arguments().Raw()))

	raw := c.Arguments().Raw()
	raw[2] = 'Z'
	value, ok := c.Arguments().Value("s")
	require.True(t, ok)
	value[1] = 'Z'
	keys := c.Arguments().Keys()
	keys[0] = "Z"
	out, err := c.MarshalJSON()
	require.NoError(t, err)
	out[0] = '['
	assert.Equal(t, `{"left":20,"s":"x"}`, string(c.Arguments().Raw()))
	assert.Equal(t, []string{"left", "s"}, c.Arguments().Keys())
	again, err := c.MarshalJSON()
	require.NoError(t, err)
	assert.Equal(t, `{"type":"toolCall","id":"call-1","name":"add","arguments":{"left":20,"s":"x"}}`, string(again))

	args := []byte(`{"s":"x"}`)
	n, err := NewToolCall("c", "n", args)
	require.NoError(t, err)
	args[6] = 'y'
	s, err := n.Arguments().String("s")
	require.NoError(t, err)
	assert.Equal(t, "x", s)
}

func TestToolCallMarshalJSON(t *testing.T) {
	tests := []struct {
		name string
		give string
		want string
	}{
		{
			name: "field order and canonical arguments",
			give: `{"arguments":{"b":[1, 2],"a":"\u00e9"},"name":"add","id":"c-1","type":"toolCall","extra":1}`,
			want: `{"type":"toolCall","id":"c-1","name":"add","arguments":{"a":"é","b":[1,2]}}`,
		},
		{
			name: "id and name escaped like arguments",
			give: `{"type":"toolCall","id":"a\"b\\c/é","name":"<tool>&","arguments":{}}`,
			want: `{"type":"toolCall","id":"a\"b\\c/é","name":"<tool>&","arguments":{}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ParseToolCall([]byte(tt.give))
			require.NoError(t, err)
			out, err := c.MarshalJSON()
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(out))
			again, err := ParseToolCall(out)
			require.NoError(t, err)
			assert.Equal(t, c, again)
			out2, err := again.MarshalJSON()
			require.NoError(t, err)
			assert.Equal(t, out, out2)
		})
	}
}

func TestToolCallZeroValue(t *testing.T) {
	var c ToolCall
	assert.True(t, c.IsZero())
	_, err := c.MarshalJSON()
	assert.Equal(t, "tool call: cannot encode the zero ToolCall", requireInvalidCall(t, err))
	assert.Equal(t, "{}", string(c.Arguments().Raw()))
}

func TestToolCallThroughEncodingJSON(t *testing.T) {
	type envelope struct {
		Call ToolCall  `json:"call"`
		Ptr  *ToolCall `json:"ptr"`
	}
	give := `{"call":{"type":"toolCall","id":"c","name":"add","arguments":{"z":1,"a":2}},"ptr":{"type":"toolCall","id":"d","name":"sub","arguments":{}}}`
	var env envelope
	require.NoError(t, json.Unmarshal([]byte(give), &env))
	assert.Equal(t, "c", env.Call.ID())
	assert.Equal(t, `{"a":2,"z":1}`, string(env.Call.Arguments().Raw()))
	require.NotNil(t, env.Ptr)
	assert.Equal(t, "sub", env.Ptr.Name())

	out, err := json.Marshal(env)
	require.NoError(t, err)
	assert.Equal(t, `{"call":{"type":"toolCall","id":"c","name":"add","arguments":{"a":2,"z":1}},"ptr":{"type":"toolCall","id":"d","name":"sub","arguments":{}}}`, string(out))

	err = json.Unmarshal([]byte(`{"call":{"type":"toolCall","id":"c","name":"add","arguments":{"a":1,"a":2}}}`), &env)
	assert.Equal(t, `tool call: duplicate key "a" in arguments`, requireInvalidCall(t, err))

	err = json.Unmarshal([]byte(`{"call":null}`), &env)
	assert.Equal(t, `tool call: must be a JSON object, got null`, requireInvalidCall(t, err))
}

func TestToolCallUnmarshalJSONKeepsValueOnError(t *testing.T) {
	c, err := ParseToolCall([]byte(wireCall(`{"a":1}`)))
	require.NoError(t, err)
	before := c
	err = c.UnmarshalJSON([]byte(`{"type":"toolCall"}`))
	assert.Equal(t, `tool call: missing "id"`, requireInvalidCall(t, err))
	assert.Equal(t, before, c)
}

// TestCanonicalAgreesWithEncodingJSON checks the canonical form against an independent
// implementation: decoding it with encoding/json and encoding the result again gives, once
// canonicalized, the same bytes.
func TestCanonicalAgreesWithEncodingJSON(t *testing.T) {
	tests := []struct {
		name string
		give string
	}{
		{"scalars", `{"t":true,"f":false,"n":null,"i":-12,"x":1.5e-3,"big":123456789012345678901234567890}`},
		{"strings", `{"s":"\u0000\u001f\"\\/\b\f\n\r\t\u2028\u2029<>&é😀","":""}`},
		{"keys", `{"é":1,"e":2,"\n":3,"😀":4,"ｚ":5,"A":6,"a":{"Z":[{"y":1,"x":2}]}}`},
		{"empty containers", `{"o":{},"a":[],"aa":[[],[{}]]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := NewToolCall("c", "n", []byte(tt.give))
			require.NoError(t, err)
			var decoded map[string]any
			require.NoError(t, c.Arguments().Decode(&decoded))
			reencoded, err := json.Marshal(decoded)
			require.NoError(t, err)
			again, err := NewToolCall("c", "n", reencoded)
			require.NoError(t, err)
			assert.Equal(t, string(c.Arguments().Raw()), string(again.Arguments().Raw()))
			assert.True(t, json.Valid(c.Arguments().Raw()))
		})
	}
}

func TestContractErrorIsReturnedUnwrapped(t *testing.T) {
	_, err := ParseToolCall([]byte(`[]`))
	var ce *ContractError
	require.True(t, errors.As(err, &ce))
	assert.Same(t, ce, err.(*ContractError), "the error is the *ContractError itself")
}

// typicalCall is a call as a model sends it: a provider id, a few arguments of each kind.
const typicalCall = `{"type":"toolCall","id":"call_8fJ2kq0Zr1uV3wX9yB6nM4pL","name":"search_documents",` +
	`"arguments":{"query":"durable execution on Temporal","limit":10,"filters":{"after":"2024-01-01",` +
	`"tags":["go","temporal"]},"includeSnippets":true}}`

func BenchmarkParseToolCall(b *testing.B) {
	data := []byte(typicalCall)
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := ParseToolCall(data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseToolCallLarge is a write_file call with a 64 KiB body.
func BenchmarkParseToolCallLarge(b *testing.B) {
	body := strings.Repeat(`package main\n\nfunc main() {\n\tprintln(\"hello, world\")\n}\n`, 1100)
	data := []byte(`{"type":"toolCall","id":"call_1","name":"write_file","arguments":{"path":"main.go","content":"` + body + `"}}`)
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := ParseToolCall(data); err != nil {
			b.Fatal(err)
		}
	}
}
