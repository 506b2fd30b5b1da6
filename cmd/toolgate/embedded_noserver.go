//go:build toolgate_noserver

package main

import (
	"context"
	"errors"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// A toolgate built with the toolgate_noserver tag has no embedded server: static analysis builds
// it so (see embedded.go), nobody runs it. The declarations mirror embedded_server.go.

var errNoServer = errors.New("this toolgate was built without the embedded server (build tag toolgate_noserver)")

// embeddedOptions has the fields of devserver.Options that cmd/toolgate sets.
type embeddedOptions struct {
	DataDir         string
	Postgres        string
	Namespace       string
	UI              bool
	Logger          *zap.Logger
	ServerLogLevel  *zapcore.Level
	FrontendPort    int
	UICodecEndpoint string
	UIPort          int
	DynamicConfig   map[string]any
	// MetricsRegisterer is devserver.Options.MetricsRegisterer.
	MetricsRegisterer prometheus.Registerer
}

func startEmbedded(context.Context, embeddedOptions) (embeddedServer, error) { return nil, errNoServer }

func checkPostgresURL(string) error { return errNoServer }

func parseDynamicConfigValue(string) (string, any, error) { return "", nil, errNoServer }
