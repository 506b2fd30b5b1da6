package searchattr

import (
	"testing"

	"github.com/stretchr/testify/assert"
	enumspb "go.temporal.io/api/enums/v1"
)

func TestDefinitions(t *testing.T) {
	want := map[string]enumspb.IndexedValueType{
		"ToolName":    enumspb.INDEXED_VALUE_TYPE_KEYWORD,
		"ToolCallId":  enumspb.INDEXED_VALUE_TYPE_KEYWORD,
		"ToolOutcome": enumspb.INDEXED_VALUE_TYPE_KEYWORD,
	}
	assert.Equal(t, want, Definitions())
	assert.Equal(t, []string{"ToolName", "ToolCallId", "ToolOutcome"}, Names())
}

func TestDefinitionsReturnsFreshMap(t *testing.T) {
	first := Definitions()
	delete(first, "ToolName")
	assert.Contains(t, Definitions(), "ToolName")
}
