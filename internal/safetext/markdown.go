package safetext

import (
	"strings"
	"unicode/utf8"
)

// CodeSpan is s escaped (Escape) in a Markdown code span whose fence is longer than any run of
// backticks in it: nothing in s renders as a link or markup where Markdown is shown (the
// Temporal Web UI's summaries and details).
func CodeSpan(s string) string {
	s, _ = Escape(s)
	fence := strings.Repeat("`", LongestRun(s, '`')+1)
	return fence + " " + s + " " + fence
}

// LongestRun is the length of the longest run of c in s.
func LongestRun(s string, c byte) int {
	best, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			run++
			best = max(best, run)
		} else {
			run = 0
		}
	}
	return best
}

// Cut returns the longest prefix of s of at most n bytes that ends on a rune boundary.
func Cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// callSep parts a call summary: tool names never hold it.
const callSep = " · "

// CallSummary is the summary of a call's workflow, of a Local call's marker and of its undo,
// which the Web UI shows: the tool's name, " · ", and the model's call ID as a CodeSpan.
func CallSummary(toolName, toolCallID string) string {
	return toolName + callSep + CodeSpan(toolCallID)
}

// ParseCallSummary returns the tool name and call ID of a CallSummary of a valid call ID (one
// Escape leaves as it is); ok is false for anything else.
func ParseCallSummary(s string) (toolName, toolCallID string, ok bool) {
	toolName, span, ok := strings.Cut(s, callSep)
	fence := span[:len(span)-len(strings.TrimLeft(span, "`"))]
	if !ok || toolName == "" || fence == "" {
		return "", "", false
	}
	inner, opened := strings.CutPrefix(span, fence+" ")
	id, closed := strings.CutSuffix(inner, " "+fence)
	if !opened || !closed || id == "" {
		return "", "", false
	}
	return toolName, id, true
}
