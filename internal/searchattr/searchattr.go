package searchattr

import (
	"context"
	"fmt"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"

	"github.com/toolgate/toolgate/wire"
)

// Names returns the attribute names in a fixed order: ToolName, ToolCallId, ToolOutcome,
// ToolPrincipal (wire.SearchAttributeNames).
func Names() []string {
	return wire.SearchAttributeNames()
}

// Definitions returns a new map from each attribute name to its type (all Keyword), ready for
// an AddSearchAttributes request. The caller owns the map.
func Definitions() map[string]enumspb.IndexedValueType {
	defs := make(map[string]enumspb.IndexedValueType, len(Names()))
	for _, name := range Names() {
		defs[name] = enumspb.INDEXED_VALUE_TYPE_KEYWORD
	}
	return defs
}

// Missing returns the toolgate attributes (with their types) that listed, a namespace's custom
// search attributes, lacks. An attribute listed with another type than Keyword is an error: no
// workflow could upsert it.
func Missing(listed map[string]enumspb.IndexedValueType) (map[string]enumspb.IndexedValueType, error) {
	missing := Definitions()
	for _, name := range Names() {
		got, ok := listed[name]
		if !ok {
			continue
		}
		if want := missing[name]; got != want {
			return nil, fmt.Errorf("search attribute %q has type %v, want %v", name, got, want)
		}
		delete(missing, name)
	}
	return missing, nil
}

// MissingIn lists namespace's custom search attributes through op and returns [Missing] of them.
func MissingIn(ctx context.Context, op operatorservice.OperatorServiceClient, namespace string) (map[string]enumspb.IndexedValueType, error) {
	resp, err := op.ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: namespace})
	if err != nil {
		return nil, fmt.Errorf("list search attributes: %w", err)
	}
	return Missing(resp.GetCustomAttributes())
}
