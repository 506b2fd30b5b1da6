package wire

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEscapeID(t *testing.T) {
	tests := []struct {
		name string
		give string
		want string
	}{
		{name: "printable ASCII kept", give: "call_Ab-9.x:/@+=~!", want: "call_Ab-9.x:/@+=~!"},
		{name: "percent escaped", give: "50%", want: "50%25"},
		{name: "space escaped", give: "a b", want: "a%20b"},
		{name: "two-byte character", give: "é", want: "%C3%A9"},
		{name: "three-byte character", give: "ㅤ", want: "%E3%85%A4"},
		{name: "four-byte character", give: "😀", want: "%F0%9F%98%80"},
		{name: "an escape-looking input", give: "%C3%A9", want: "%25C3%25A9"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := EscapeID(tt.give)
			assert.Equal(t, tt.want, got)
			back, err := UnescapeID(got)
			require.NoError(t, err)
			assert.Equal(t, tt.give, back)
		})
	}
}

func TestUnescapeIDRejectsWhatEscapeNeverProduces(t *testing.T) {
	tests := []struct {
		name string
		give string
		want string
	}{
		{name: "truncated", give: "a%C", want: "truncated escape at byte 1"},
		{name: "lower-case hex", give: "%c3%a9", want: "malformed escape at byte 0"},
		{name: "escaped printable", give: "%41", want: "%41 at byte 0 escapes a byte that stays as it is"},
		{name: "raw space", give: "a b", want: "byte 0x20 at 1 should have been escaped"},
		{name: "raw non-ASCII", give: "é", want: "byte 0xC3 at 0 should have been escaped"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := UnescapeID(tt.give)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

// FuzzEscapeID checks the invariants of the mapping: printable ASCII output, round trip, and
// identity on the IDs providers use.
func FuzzEscapeID(f *testing.F) {
	for _, seed := range []string{"call-add-1", "ts-é-1", "a b%", "", "\x00\xff", "%25"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := EscapeID(s)
		for i := 0; i < len(got); i++ {
			if got[i] <= ' ' || got[i] > '~' {
				t.Fatalf("EscapeID(%q) = %q holds byte 0x%02X", s, got, got[i])
			}
		}
		back, err := UnescapeID(got)
		if err != nil || back != s {
			t.Fatalf("UnescapeID(EscapeID(%q)) = %q, %v", s, back, err)
		}
		if utf8.ValidString(s) && !strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r > '~' || r == '%' }) && got != s {
			t.Fatalf("EscapeID(%q) = %q, want it unchanged", s, got)
		}
	})
}
