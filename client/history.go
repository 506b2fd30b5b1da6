package client

import (
	"context"
	"errors"
	"fmt"
	"github.com/toolgate/toolgate/wire"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/temporalproto"
)

// History reads every event of a run of workflowID (runID "": the latest run): what an operator
// exports and what replay tests feed to a WorkflowReplayer. No such workflow is wire.ErrNotFound.
func (c *Client) History(ctx context.Context, workflowID, runID string) (*historypb.History, error) {
	it := c.sdk.GetWorkflowHistory(ctx, workflowID, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	hist := &historypb.History{}
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			var notFound *serviceerror.NotFound
			if errors.As(err, &notFound) {
				return nil, fmt.Errorf("read history of %s: %w", workflowID, wire.ErrNotFound)
			}
			return nil, fmt.Errorf("read history of %s: %w", workflowID, err)
		}
		hist.Events = append(hist.Events, e)
	}
	return hist, nil
}

// HistoryJSON encodes hist as the indented JSON, ending in a newline, that the Temporal CLI and
// Web UI export and worker.WorkflowReplayer's ReplayWorkflowHistoryFromJSONFile reads.
func HistoryJSON(hist *historypb.History) ([]byte, error) {
	data, err := temporalproto.CustomJSONMarshalOptions{Indent: "  "}.Marshal(hist)
	if err != nil {
		return nil, fmt.Errorf("encode history: %w", err)
	}
	return append(data, '\n'), nil
}
