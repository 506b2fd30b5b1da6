package wire

import (
	"fmt"
	"strings"
)

// Names of a call's workflow ID and of a worker's identity on the task queue.
const (
	// WorkflowIDPrefix starts every call's workflow ID: WorkflowIDPrefix + the escaped call ID,
	// or the escaped scope + "/" + WorkflowIDPrefix + the escaped call ID ([WorkflowID]
	// and docs/contract.md give the escaping).
	WorkflowIDPrefix = "toolcall-"
	// ToolSetIdentityMarker separates a toolgate worker's identity ("<pid>@<host>") from the
	// fingerprint of the tool set it serves, as in "4242@host toolset:0387c08e7b6b". Workers
	// read it from each other's poller identities to keep one tool set per task queue.
	ToolSetIdentityMarker = " toolset:"
)

// escapeByte is the one ASCII byte besides the unprintable ones that EscapeID escapes: the escape
// character itself, which keeps the mapping reversible.
const escapeByte = '%'

// WorkflowID returns the workflow ID of a call: "toolcall-" + EscapeID(callID), or with a
// non-empty scope EscapeID(scope) + "/toolcall-" + EscapeID(callID).
//
// Temporal SDKs send the workflow ID in a gRPC header, and gRPC refuses header values that are not
// printable ASCII, so a workflow ID must be ASCII for every worker to answer it. Printable call IDs
// (every provider's are) keep their readable form: "call-add-1" is "toolcall-call-add-1";
// "ts-é-1" is "toolcall-ts-%C3%A9-1".
func WorkflowID(scope, callID string) string {
	if scope == "" {
		return WorkflowIDPrefix + EscapeID(callID)
	}
	return EscapeID(scope) + "/" + WorkflowIDPrefix + EscapeID(callID)
}

// EscapeID maps s to printable ASCII, reversibly: every byte of s's UTF-8 encoding from '!' (0x21)
// to '~' (0x7E) except '%' is kept; every other byte (space, '%', controls, and each byte of a
// non-ASCII character) becomes '%' and two upper-case hex digits. It is what JavaScript computes
// with s.replace(/[^\x21-\x24\x26-\x7e]/gu, encodeURIComponent); docs/contract.md gives it in
// other languages. UnescapeID reverses it.
func EscapeID(s string) string {
	n := 0
	for i := 0; i < len(s); i++ {
		if !keptInID(s[i]) {
			n++
		}
	}
	if n == 0 {
		return s
	}
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(len(s) + 2*n)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if keptInID(c) {
			b.WriteByte(c)
			continue
		}
		b.WriteByte(escapeByte)
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&0xF])
	}
	return b.String()
}

// UnescapeID returns the s that EscapeID mapped to escaped. It refuses what EscapeID never
// produces (a byte it would have escaped, a malformed or lower-case escape), so every accepted
// input has exactly one original.
func UnescapeID(escaped string) (string, error) {
	var b strings.Builder
	b.Grow(len(escaped))
	for i := 0; i < len(escaped); i++ {
		c := escaped[i]
		switch {
		case c == escapeByte:
			if i+2 >= len(escaped) {
				return "", fmt.Errorf("unescape ID %q: truncated escape at byte %d", escaped, i)
			}
			hi, lo := unhex(escaped[i+1]), unhex(escaped[i+2])
			if hi < 0 || lo < 0 {
				return "", fmt.Errorf("unescape ID %q: malformed escape at byte %d", escaped, i)
			}
			v := byte(hi<<4 | lo)
			if keptInID(v) {
				return "", fmt.Errorf("unescape ID %q: %%%02X at byte %d escapes a byte that stays as it is", escaped, v, i)
			}
			b.WriteByte(v)
			i += 2
		case keptInID(c):
			b.WriteByte(c)
		default:
			return "", fmt.Errorf("unescape ID %q: byte 0x%02X at %d should have been escaped", escaped, c, i)
		}
	}
	return b.String(), nil
}

// keptInID reports whether EscapeID keeps byte c as it is.
func keptInID(c byte) bool { return c > ' ' && c <= '~' && c != escapeByte }

// unhex returns the value of an upper-case hex digit, -1 for anything else.
func unhex(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}
