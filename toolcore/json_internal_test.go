package toolcore

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// unquote decodes every string literal as encoding/json does, including the replacements of
// invalid UTF-8 and lone surrogates.
func TestUnquoteAgreesWithEncodingJSON(t *testing.T) {
	tests := []struct {
		name string
		give string
	}{
		{name: "plain", give: `"hello"`},
		{name: "simple escapes", give: `"a\"b\\c\/d\b\f\n\r\t"`},
		{name: "BMP escape", give: `"\u00e9\u4e2d"`},
		{name: "surrogate pair", give: `"\ud83d\ude00"`},
		{name: "lone high surrogate at the end", give: `"x\ud83d"`},
		{name: "lone low surrogate", give: `"\ude00x"`},
		{name: "high surrogate before a non-surrogate escape", give: `"\ud83d\u0041"`},
		{name: "two high surrogates then a low", give: `"\ud83d\ud83d\ude00"`},
		{name: "invalid UTF-8 with an escape", give: "\"\xff\\n\xc3\""},
		{name: "invalid UTF-8 without escapes", give: "\"a\xffb\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var want string
			require.NoError(t, json.Unmarshal([]byte(tt.give), &want))
			assert.Equal(t, want, unquote(tt.give))
			assert.Equal(t, want, unquote([]byte(tt.give)))
		})
	}
}
