package searchattr

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
)

func TestDefinitions(t *testing.T) {
	want := map[string]enumspb.IndexedValueType{
		"ToolName":      enumspb.INDEXED_VALUE_TYPE_KEYWORD,
		"ToolCallId":    enumspb.INDEXED_VALUE_TYPE_KEYWORD,
		"ToolOutcome":   enumspb.INDEXED_VALUE_TYPE_KEYWORD,
		"ToolPrincipal": enumspb.INDEXED_VALUE_TYPE_KEYWORD,
		"ToolSubject":   enumspb.INDEXED_VALUE_TYPE_KEYWORD,
	}
	assert.Equal(t, want, Definitions())
	assert.Equal(t, []string{"ToolName", "ToolCallId", "ToolOutcome", "ToolPrincipal", "ToolSubject"}, Names())
}

func TestDefinitionsReturnsFreshMap(t *testing.T) {
	first := Definitions()
	delete(first, "ToolName")
	assert.Contains(t, Definitions(), "ToolName")
}

func TestMissing(t *testing.T) {
	keyword := enumspb.INDEXED_VALUE_TYPE_KEYWORD
	tests := []struct {
		name    string
		give    map[string]enumspb.IndexedValueType
		want    map[string]enumspb.IndexedValueType
		wantErr string
	}{
		{name: "none listed", give: nil, want: Definitions()},
		{name: "all listed", give: Definitions(), want: map[string]enumspb.IndexedValueType{}},
		{
			name: "some listed, others ignored",
			give: map[string]enumspb.IndexedValueType{"ToolName": keyword, "CustomerId": enumspb.INDEXED_VALUE_TYPE_INT},
			want: map[string]enumspb.IndexedValueType{"ToolCallId": keyword, "ToolOutcome": keyword, "ToolPrincipal": keyword, "ToolSubject": keyword},
		},
		{
			name:    "wrong type",
			give:    map[string]enumspb.IndexedValueType{"ToolOutcome": enumspb.INDEXED_VALUE_TYPE_TEXT},
			wantErr: `search attribute "ToolOutcome" has type Text, want Keyword`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Missing(tt.give)
			if tt.wantErr != "" {
				assert.EqualError(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}
