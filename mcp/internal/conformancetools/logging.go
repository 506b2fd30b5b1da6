package conformancetools

import (
	"context"

	"github.com/toolgate/toolgate/toolcore"
)

// loggingTools are the fixtures that log (toolcore.Log): tools-call-with-logging's, three info
// messages about 50 ms apart, and server-stateless's diagnostic, whose messages a 2026-07-28
// request without a log level must not receive.
func loggingTools() []toolcore.Tool {
	return []toolcore.Tool{
		toolcore.MustDefine(toolcore.Definition[noArgs]{Name: "test_tool_with_logging", Description: "Logs three messages while it runs.",
			Execute: func(ctx context.Context, _ noArgs) (any, error) {
				for i, message := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
					if i > 0 {
						if err := sleep(ctx, DefaultProgressGap); err != nil {
							return nil, err
						}
					}
					toolcore.Log(ctx, toolcore.LogInfo, message, nil)
				}
				return toolcore.Text("Logging test completed"), nil
			},
			Options: readOnly}),
		toolcore.MustDefine(toolcore.Definition[noArgs]{Name: "test_logging_tool", Description: "Logs a message at each level from debug to error.",
			Execute: func(ctx context.Context, _ noArgs) (any, error) {
				for _, level := range []toolcore.LogLevel{toolcore.LogDebug, toolcore.LogInfo, toolcore.LogWarning, toolcore.LogError} {
					toolcore.Log(ctx, level, "a message at "+string(level), nil)
				}
				return toolcore.Text("Logged"), nil
			},
			Options: readOnly}),
	}
}
