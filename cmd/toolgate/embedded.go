package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

// The Temporal server enters the toolgate binary in embedded_server.go only: `toolgate dev` and
// `toolgate bench` (without --address) run it in process through startEmbedded.
// embedded_noserver.go stands in for that file under the toolgate_noserver build tag, which
// make test's staticcheck uses: the ~1,600 packages of the server cost more to analyze than all
// of toolgate.

// embeddedServer is a running embedded server.
type embeddedServer interface {
	FrontendAddress() string
	Namespace() string
	UIAddress() string // "" without the UI
	Database() string  // the PostgreSQL URL without its password, "" on SQLite
	Stop() error
}

// addDynamicConfigFlag adds --dynamic-config-value, repeatable, as the Temporal CLI has it.
func addDynamicConfigFlag(cmd *cobra.Command, values *[]string) {
	cmd.Flags().StringArrayVar(values, "dynamic-config-value", nil,
		"set a setting of the embedded server's dynamic config over toolgate's tuning: KEY=JSON, e.g. history.hostLevelCacheMaxSize=8192 (repeat)")
}

// parseDynamicConfig parses --dynamic-config-value flags; an unknown key or a value the setting
// refuses is bad input.
func parseDynamicConfig(values []string) (map[string]any, error) {
	if len(values) == 0 {
		return nil, nil
	}
	dc := make(map[string]any, len(values))
	for _, v := range values {
		key, value, err := parseDynamicConfigValue(v)
		if err != nil {
			return nil, badInput(fmt.Errorf("--dynamic-config-value: %w", err))
		}
		dc[key] = value
	}
	return dc, nil
}
