package toolcore

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

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

// The one escape decoder in its two modes: lenient (unquote) decodes every string encoding/json
// accepts exactly as it does; strict (the scanner) accepts a string exactly when encoding/json
// accepts it without replacing anything, and then decodes it identically.
func FuzzDecodeString(f *testing.F) {
	for _, s := range []string{`"hello"`, `"a\"b\\c\/d\b\f\n\r\t"`, `"\u00e9\u4e2d"`, `"\ud83d\ude00"`,
		`"x\ud83d"`, `"\ude00x"`, `"\ud83d\u0041"`, "\"\xff\\n\xc3\"", "\"é\"", `"\x"`, "\"a\x01\""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, lit string) {
		if !strings.HasPrefix(lit, `"`) {
			return // the scanner calls str only at a quote
		}
		var want string
		valid := json.Unmarshal([]byte(lit), &want) == nil && skipString(lit, 0) == len(lit)
		if valid {
			assert.Equal(t, want, unquote(lit))
		}
		s := &scanner{data: []byte(lit)}
		got, _, err := s.str()
		if err == nil && s.pos == len(lit) {
			require.True(t, valid, "strict decoder accepted %q", lit)
			assert.Equal(t, want, string(got))
		} else if valid && utf8.ValidString(want) && !strings.Contains(want, "\uFFFD") {
			t.Fatalf("strict decoder refused %q: %v", lit, err)
		}
	})
}
