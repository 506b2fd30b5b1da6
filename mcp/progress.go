package mcp

import (
	"context"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/toolcore"
)

// startProgress sends one call's progress as notifications for req's progress token, through
// client.ProgressWatch: every report once, in order, the last one before the result (the caller
// sends the result after Finish). A notification that cannot be sent (the connection or the
// stream is gone) ends the notifications.
func (h *callHandler) startProgress(ctx context.Context, req *sdk.CallToolRequest, token any, workflowID, runID string) *client.ProgressWatch {
	return h.tg.WatchProgress(ctx, workflowID, runID, h.progressInterval, func(ctx context.Context, p toolcore.Progress) error {
		return req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{
			ProgressToken: token,
			Progress:      float64(p.Completed),
			Total:         float64(p.Total),
			Message:       p.Message,
		})
	})
}
