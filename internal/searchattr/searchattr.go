package searchattr

import (
	enumspb "go.temporal.io/api/enums/v1"

	"github.com/toolgate/toolgate/wire"
)

// Names returns the attribute names in a fixed order: ToolName, ToolCallId, ToolOutcome
// (wire.SearchAttributeNames).
func Names() []string {
	return wire.SearchAttributeNames()
}

// Definitions returns a new map from each attribute name to its type (all Keyword), ready for
// an AddSearchAttributes request. The caller owns the map.
func Definitions() map[string]enumspb.IndexedValueType {
	defs := make(map[string]enumspb.IndexedValueType, 3)
	for _, name := range Names() {
		defs[name] = enumspb.INDEXED_VALUE_TYPE_KEYWORD
	}
	return defs
}
