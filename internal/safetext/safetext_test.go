package safetext_test

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/internal/safetext"
)

func TestEscape(t *testing.T) {
	tests := []struct {
		name, in, want string
		n              int
	}{
		{"plain ASCII", `{"path":"report.txt"}`, `{"path":"report.txt"}`, 0},
		{"visible Unicode", "naïve café 日本 🎉", "naïve café 日本 🎉", 0},
		{"backslash stays", `a\u202eb`, `a\u202eb`, 0},
		{"NUL", "a\x00b", `a\u0000b`, 1},
		{"ESC CSI clear screen", "\x1b[2J", `\u001b[2J`, 1},
		{"newline and tab", "a\nb\tc\r", `a\u000ab\u0009c\u000d`, 3},
		{"DEL", "a\x7fb", `a\u007fb`, 1},
		{"C1 CSI 2J", "\u009b2J\u009b1;1H", `\u009b2J\u009b1;1H`, 2},
		{"C1 OSC", "\u009d8;;x\u009c", `\u009d8;;x\u009c`, 2},
		{"ANSI OSC 8 link", "\x1b]8;;http://evil\x1b\\click\x1b]8;;\x1b\\", `\u001b]8;;http://evil\u001b\click\u001b]8;;\u001b\`, 4},
		{"bidi RLO", "report\u202Etxt.sh", `report\u202etxt.sh`, 1},
		{"bidi embeddings and PDF", "\u202A\u202B\u202C\u202D", `\u202a\u202b\u202c\u202d`, 4},
		{"bidi isolates", "\u2066\u2067\u2068\u2069", `\u2066\u2067\u2068\u2069`, 4},
		{"bidi marks", "\u200E\u200F\u061C", `\u200e\u200f\u061c`, 3},
		{"zero width", "a\u200Bb\u200Cc\u200Dd\u2060e", `a\u200bb\u200cc\u200dd\u2060e`, 4},
		{"BOM", "\uFEFFx", `\ufeffx`, 1},
		{"soft hyphen", "pay\u00ADpal", `pay\u00adpal`, 1},
		{"tag characters", "ok\U000E0041\U000E007F", `ok\U000e0041\U000e007f`, 2},
		{"line separators", "a\u2028b\u2029", `a\u2028b\u2029`, 2},
		{"fillers and selectors", "\u3164\u115F\uFE0F\u180E\U000E0100\u034F", `\u3164\u115f\ufe0f\u180e\U000e0100\u034f`, 6},
		{"invalid UTF-8", "a\xffb\xc3", `a\xffb\xc3`, 2},
		{"empty", "", "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, n := safetext.Escape(tt.in)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.n, n)
			if tt.n == 0 {
				assert.Equal(t, tt.in, safetext.String(tt.in))
			} else {
				assert.Equal(t, tt.want+" "+safetext.Note(tt.n), safetext.String(tt.in))
			}
		})
	}
}

func TestJSON(t *testing.T) {
	tests := []struct {
		name, in, want string
		n              int
	}{
		{"plain", `{"a":"b"}` + "\n", `{"a":"b"}` + "\n", 0},
		{"whitespace between tokens", "{\n\t\"a\": 1\r\n}", "{\n\t\"a\": 1\r\n}", 0},
		{"C1 CSI", `{"a":"` + "\u009b2J" + `"}`, `{"a":"\u009b2J"}`, 1},
		{"bidi", `["report` + "\u202e" + `txt.sh"]`, `["report\u202etxt.sh"]`, 1},
		{"tag beyond the BMP", `"` + "\U000E0041" + `"`, `"\udb40\udc41"`, 1},
		{"bad UTF-8", "\"\xff\"", `"\ufffd"`, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, n := safetext.JSON([]byte(tt.in))
			assert.Equal(t, tt.want, string(got))
			assert.Equal(t, tt.n, n)
			if utf8.ValidString(tt.in) {
				var before, after any
				require.NoError(t, json.Unmarshal([]byte(tt.in), &before))
				require.NoError(t, json.Unmarshal(got, &after))
				assert.Equal(t, before, after, "the same JSON value")
			}
		})
	}
}

func TestNote(t *testing.T) {
	assert.Equal(t, "", safetext.Note(0))
	assert.Equal(t, "(escaped 1 control character)", safetext.Note(1))
	assert.Equal(t, "(escaped 3 control characters)", safetext.Note(3))
}

// FuzzEscape: the output is valid UTF-8 without a control or invisible character, it equals the
// input exactly when nothing was escaped, and escaping it again changes nothing.
func FuzzEscape(f *testing.F) {
	for _, s := range []string{"", "plain", "\u009b2J", "report\u202etxt.sh", "a\x00b", "\x1b]8;;http://evil\x1b\\", "\xff", "\U000E0041"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out, n := safetext.Escape(s)
		require.True(t, utf8.ValidString(out))
		if n == 0 {
			require.Equal(t, s, out)
		} else {
			require.NotEqual(t, s, out)
		}
		again, m := safetext.Escape(out)
		require.Zero(t, m, "%q", out)
		require.Equal(t, out, again)
		for _, r := range out {
			require.False(t, r < 0x20 || (r >= 0x7f && r <= 0x9f), "%q", out)
		}
		require.LessOrEqual(t, strings.Count(out, `\`)-strings.Count(s, `\`), n)
	})
}
