package safetext_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/toolgate/toolgate/internal/safetext"
)

// A call summary shows the model's call ID in a code span no Markdown in it escapes from, and
// reads back as the tool name and ID; anything else is no call summary.
func TestCallSummary(t *testing.T) {
	for _, id := range []string{"call_1", "a`b", "`x", "x`", "[x](https://evil)", "** ``` **", "a · b"} {
		s := safetext.CallSummary("book", id)
		assert.Greater(t, safetext.LongestRun(s[len("book · "):], '`'), safetext.LongestRun(id, '`'), "%q: the fence is longer than any run in the ID", s)
		name, got, ok := safetext.ParseCallSummary(s)
		assert.True(t, ok, s)
		assert.Equal(t, "book", name, s)
		assert.Equal(t, id, got, s)
	}
	assert.Equal(t, "book · ` [x](https://evil) `", safetext.CallSummary("book", "[x](https://evil)"))
	for _, bad := range []string{"book", "book · call_1", "book · ` `", " · ` x `", "book · ` x", ""} {
		_, _, ok := safetext.ParseCallSummary(bad)
		assert.False(t, ok, bad)
	}
}

// Cut keeps whole runes only.
func TestCut(t *testing.T) {
	assert.Equal(t, "abc", safetext.Cut("abc", 5))
	assert.Equal(t, "a", safetext.Cut("aé", 2), "é is two bytes: cut before it")
	assert.Equal(t, "aé", safetext.Cut("aéb", 3))
	assert.Equal(t, "", safetext.Cut("é", 1))
}
