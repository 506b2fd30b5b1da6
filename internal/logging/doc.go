// Package logging is the glue between toolgate's zap logging and the Temporal SDK.
//
// # Routing
//
// The Temporal SDK logs through its own [log.Logger] interface, set once on the client
// (client.Options.Logger); workers and workflows inherit it. [Temporal] adapts a *zap.Logger to it
// through log/slog and zapslog, so SDK lines land in the same zap core, with the same encoder and
// level, as toolgate's own lines. A nil logger gives an SDK logger that discards everything.
//
// [log.Logger]: https://pkg.go.dev/go.temporal.io/sdk/log#Logger
package logging
