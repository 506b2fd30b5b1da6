//go:build !toolgate_noserver

package main

import (
	"context"

	"github.com/toolgate/toolgate/cmd/toolgate/internal/devserver"
	"github.com/toolgate/toolgate/cmd/toolgate/internal/pgstore"
)

// embeddedOptions configures startEmbedded (devserver.Options documents each field).
type embeddedOptions = devserver.Options

// startEmbedded starts the embedded server.
func startEmbedded(ctx context.Context, opts embeddedOptions) (embeddedServer, error) {
	return devserver.Start(ctx, opts)
}

// checkPostgresURL checks a --db URL before anything starts.
func checkPostgresURL(url string) error {
	_, err := pgstore.ParseURL(url)
	return err
}

// parseDynamicConfigValue parses one KEY=JSON and checks it against the server's settings.
func parseDynamicConfigValue(s string) (string, any, error) {
	return devserver.ParseDynamicConfigValue(s)
}
