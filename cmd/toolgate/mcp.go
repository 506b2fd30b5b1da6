package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	tgclient "github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/mcp"
	"github.com/toolgate/toolgate/toolcore"
)

type mcpOptions struct {
	conn           connOptions
	toolbox        toolboxOptions
	taskQueue      string
	scope          string
	listen         string
	allowedHosts   []string
	allowedOrigins []string
	metrics        metricsOptions
}

func newMCPCommand(a *app) *cobra.Command {
	var o mcpOptions
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve the worker's tools as durable MCP tools (stdio, or streamable HTTP with --listen)",
		Long: `Serve the tools of the workers on --task-queue to MCP clients. Every tools/call runs as one
ToolCallWorkflow on the Temporal server, so it survives this process: a client that retries with
the same "_meta": {"io.toolgate/idempotencyKey": "<key>"} attaches to the recorded run.

Without --listen, MCP speaks over stdin/stdout (the way an agent spawns a local server; logs go
to stderr). With --listen HOST:PORT it serves streamable HTTP at /mcp, loopback by default;
requests whose Host or Origin is not loopback (or allowed with --allow-mcp-host,
--allow-mcp-origin) get 403.

The tool list comes from the workers' catalog; when no worker answers, from this build's toolbox
(--root, --allow-host).`,
		Example: `  toolgate mcp
  toolgate mcp --listen 127.0.0.1:8931
  claude mcp add toolgate -- toolgate mcp --address 127.0.0.1:7233`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runMCP(cmd.Context(), a, o)
		},
	}
	addConnFlags(cmd, &o.conn)
	addTaskQueueFlag(cmd, &o.taskQueue)
	addScopeFlag(cmd, &o.scope)
	addToolboxFlags(cmd, &o.toolbox)
	addMetricsFlag(cmd, &o.metrics)
	fs := cmd.Flags()
	fs.StringVar(&o.listen, "listen", "", "serve streamable HTTP on HOST:PORT at /mcp instead of stdio")
	fs.StringSliceVar(&o.allowedHosts, "allow-mcp-host", nil, "Host name accepted besides loopback names (repeat)")
	fs.StringSliceVar(&o.allowedOrigins, "allow-mcp-origin", nil, "Origin accepted besides loopback origins (repeat)")
	bindEnv(fs, "listen", "TOOLGATE_MCP_LISTEN")
	return cmd
}

func runMCP(ctx context.Context, a *app, o mcpOptions) (err error) {
	c, closeAll, err := dialMetered(ctx, a.logger, o.metrics, o.conn) // the SDK client's request metrics
	if err != nil {
		return err
	}
	defer func() { err = closeAll(err) }()
	tg := o.conn.toolgate(c, o.taskQueue, o.scope)
	tools, err := mcpTools(ctx, a, o, tg)
	if err != nil {
		return err
	}
	server := mcp.NewServer(tg, tools, mcp.Options{})
	if o.listen == "" {
		err := server.Run(ctx, mcp.Transport(&sdk.StdioTransport{}))
		if errors.Is(err, context.Canceled) {
			return nil
		}
		return err
	}
	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return badInput(fmt.Errorf("listen on %s: %w", o.listen, err))
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.HTTPHandler(server, mcp.HTTPOptions{AllowedHosts: o.allowedHosts, AllowedOrigins: o.allowedOrigins}))
	srv := &http.Server{Handler: mux}
	a.logger.Sugar().Infof("MCP streamable HTTP on http://%s/mcp", ln.Addr())
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// mcpTools lists the workers' tools, or this build's toolbox when no worker answers.
func mcpTools(ctx context.Context, a *app, o mcpOptions, tg *tgclient.Client) ([]toolcore.ToolInfo, error) {
	tools, err := tg.ListTools(ctx)
	if err == nil {
		return tools, nil
	}
	if !errors.Is(err, tgclient.ErrNoWorker) {
		return nil, err
	}
	a.logger.Sugar().Warnf("no worker answered on task queue %s; listing this build's toolbox", o.taskQueue)
	reg, err := o.toolbox.registry(nil)
	if err != nil {
		return nil, err
	}
	return reg.Infos(), nil
}
