package mcp

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// A task ID rides in Mcp-Name as itself when it is plain printable ASCII, and as SEP-2243's
// =?base64?...?= sentinel otherwise (non-ASCII, control characters, surrounding blanks, or a
// value that looks like the sentinel); the server decodes either back to the ID.
func TestMcpNameValueRoundTrips(t *testing.T) {
	for _, tc := range []struct{ id, header string }{
		{"mcp:abc-123", "mcp:abc-123"},
		{"tâche-1", "=?base64?dMOiY2hlLTE=?="},
		{" padded", "=?base64?IHBhZGRlZA==?="},
		{"line\nbreak", "=?base64?bGluZQpicmVhaw==?="},
		{"=?base64?abc?=", "=?base64?PT9iYXNlNjQ/YWJjPz0=?="},
	} {
		assert.Equal(t, tc.header, mcpNameValue(tc.id), "%q", tc.id)
		decoded, ok := mcpNameDecoded(tc.header)
		assert.True(t, ok, "%q", tc.header)
		assert.Equal(t, tc.id, decoded)
	}
	_, ok := mcpNameDecoded("=?base64?***?=")
	assert.False(t, ok, "an invalid sentinel is refused")
}
