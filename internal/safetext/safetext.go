// Package safetext renders untrusted text (a model's arguments, a tool's output, a reviewer's
// reason) for a human to read on a terminal or in a browser: every character that a terminal acts
// on or that a reader cannot see is shown as a visible escape, so what the reviewer reads is what
// was recorded.
//
// Only the display changes: callers escape a copy for printing and keep the recorded bytes (and
// so the call hash a reviewer approves) exact.
package safetext

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Escape returns s with every control or invisible character written as an escape and the number
// of characters it escaped (0: s is returned unchanged). Escaped are:
//
//   - C0 controls U+0000-U+001F (NUL, ESC, newline and tab too), DEL U+007F and C1 controls
//     U+0080-U+009F (CSI U+009B, OSC U+009D): as \u0000 ... \u009f;
//   - format characters (category Cf): the bidi controls U+202A-U+202E, U+2066-U+2069, the marks
//     U+200E, U+200F, U+061C, the zero-width U+200B-U+200D, U+2060, U+FEFF, the soft hyphen
//     U+00AD, the tag characters U+E0000-U+E007F and the rest of Cf: as \u202e or \U000e0041;
//   - the line and paragraph separators U+2028, U+2029, and the invisible fillers and joiners
//     U+034F, U+115F, U+1160, U+3164, U+FFA0, U+180B-U+180F, U+FE00-U+FE0F, U+E0100-U+E01EF;
//   - bytes that are not UTF-8: as \x80.
//
// A backslash stays as it is: when Escape escaped anything, say so (Note) so a reader can tell
// an escape from text that spells one.
func Escape(s string) (string, int) {
	i := 0
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if hidden(r, size) {
			break
		}
		i += size
	}
	if i == len(s) {
		return s, 0
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	n := 0
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
			n++
		case hidden(r, size):
			if r > 0xFFFF {
				fmt.Fprintf(&b, `\U%08x`, r)
			} else {
				fmt.Fprintf(&b, `\u%04x`, r)
			}
			n++
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String(), n
}

// JSON returns the JSON text data with every character Escape would escape, other than the
// whitespace between tokens (tab, newline, carriage return), written as a JSON \u escape
// (a surrogate pair beyond U+FFFF; U+FFFD for a byte that is not UTF-8, as encoders do), and how
// many it escaped. Inside a JSON string those characters can only appear raw, so the result
// decodes to the same value: --json output stays exact for a program and safe on a terminal.
func JSON(data []byte) ([]byte, int) {
	var out []byte
	n, start := 0, 0
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r == '\t' || r == '\n' || r == '\r' || !hidden(r, size) {
			i += size
			continue
		}
		if out == nil {
			out = make([]byte, 0, len(data)+16)
		}
		out = append(out, data[start:i]...)
		switch {
		case r == utf8.RuneError && size <= 1:
			out = append(out, `\ufffd`...)
		case r > 0xFFFF:
			hi, lo := utf16.EncodeRune(r)
			out = fmt.Appendf(out, `\u%04x\u%04x`, hi, lo)
		default:
			out = fmt.Appendf(out, `\u%04x`, r)
		}
		n++
		i += size
		start = i
	}
	if out == nil {
		return data, 0
	}
	return append(out, data[start:]...), n
}

// Note says how many characters Escape escaped, for a caller to print beside the text:
// "(escaped 3 control characters)"; "" for 0.
func Note(n int) string {
	switch n {
	case 0:
		return ""
	case 1:
		return "(escaped 1 control character)"
	}
	return fmt.Sprintf("(escaped %d control characters)", n)
}

// String is Escape with its Note appended after a space when it escaped anything: one call for a
// line a human reads.
func String(s string) string {
	out, n := Escape(s)
	if n == 0 {
		return out
	}
	return out + " " + Note(n)
}

// hidden reports whether the rune r (decoded from size bytes) must be shown escaped.
func hidden(r rune, size int) bool {
	switch {
	case r == utf8.RuneError && size <= 1:
		return true
	case r < 0x20, r >= 0x7F && r <= 0x9F:
		return true
	case r < 0x7F:
		return false
	case unicode.Is(unicode.Cf, r):
		return true
	}
	switch r {
	case 0x2028, 0x2029, 0x034F, 0x115F, 0x1160, 0x3164, 0xFFA0:
		return true
	}
	return (r >= 0x180B && r <= 0x180F) || (r >= 0xFE00 && r <= 0xFE0F) ||
		(r >= 0xE0000 && r <= 0xE007F) || (r >= 0xE0100 && r <= 0xE01EF)
}
