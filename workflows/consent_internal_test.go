package workflows

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/toolgate/toolgate/wire"
)

// The Web UI renders current details as Markdown: an asserted principal, a scope or a URL that
// carries Markdown stays text in a code span.
func TestConsentDetailsKeepMarkdownInert(t *testing.T) {
	d := consentDetails("https://idp.example [click](https://evil.example)",
		wire.ConsentRequest{Provider: "gh", Scopes: []string{"repo", "[x](y)"}, URL: "https://idp.example/a?q=`x`&s=<b>"},
		time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	assert.Equal(t, "awaiting consent of ` https://idp.example [click](https://evil.example) ` to ` gh ` (scopes ` repo [x](y) `), until 2026-01-02T03:04:05Z: the principal opens `` https://idp.example/a?q=`x`&s=<b> ``", d)
	assert.False(t, strings.Contains(d, "\n"))
}
