package mcp

import (
	"context"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/toolcore"
)

// startProgress sends one call's progress as notifications for req's progress token (nil: none),
// and its tool's log messages when its client asked for them (logging.go), through
// client.ProgressWatch: every report and message once, in the order the tool made them, the last
// ones before the result (the caller sends the result after Finish). A notification that cannot
// be sent (the connection or the stream is gone) ends the notifications.
func (h *callHandler) startProgress(ctx context.Context, req *sdk.CallToolRequest, token any, workflowID, runID string) *client.ProgressWatch {
	var progress func(context.Context, toolcore.Progress) error
	if token != nil {
		progress = func(ctx context.Context, p toolcore.Progress) error {
			return req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{
				ProgressToken: token,
				Progress:      float64(p.Completed),
				Total:         float64(p.Total),
				Message:       p.Message,
			})
		}
	}
	var logs func(context.Context, toolcore.LogMessage) error
	if h.wantsLogs(req) {
		logs = notifyLog(req, req.Params.Name)
	}
	return h.tg.WatchProgressAndLogs(ctx, workflowID, runID, h.progressInterval, progress, logs)
}
