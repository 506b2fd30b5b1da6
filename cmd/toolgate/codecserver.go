package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"github.com/toolgate/toolgate/codec"
)

type codecServerOptions struct {
	codecKey string
	listen   string
	origins  []string
	token    string
}

func newCodecServerCommand(a *app) *cobra.Command {
	var o codecServerOptions
	cmd := &cobra.Command{
		Use:   "codec-server",
		Short: "Serve the Temporal codec-server protocol, so the Web UI shows encrypted payloads",
		Long: `Serve POST /encode and /decode (the Temporal codec-server protocol) with the keys of
--codec-key, so the Temporal Web UI (Settings > Codec Server, or ui-server's codec.endpoint) and
the Temporal CLI (--codec-endpoint) show the arguments and results of encrypted calls.

--ui-origin grants CORS to the Web UI's origin (repeat it for several). --token makes every
request carry "Authorization: Bearer <token>" (the UI sends it with "pass access token" when its
login issues that token). Without a token, keep --listen on loopback.

When it listens it prints "codec-server http://host:port" on stdout. Ctrl-C stops it.`,
		Example: `  toolgate codec-server --codec-key keys.txt --ui-origin http://127.0.0.1:8233
  TOOLGATE_CODEC_KEY=env:KEYS toolgate codec-server --listen 0.0.0.0:8081 --token "$TOKEN"`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runCodecServer(cmd.Context(), a, o)
		},
	}
	addCodecKeyFlag(cmd, &o.codecKey)
	fs := cmd.Flags()
	fs.StringVar(&o.listen, "listen", "127.0.0.1:8081", "host:port to serve on (port 0: any free port)")
	fs.StringArrayVar(&o.origins, "ui-origin", nil, `browser origin allowed by CORS, such as http://127.0.0.1:8233 ("*": any)`)
	fs.StringVar(&o.token, "token", "", "bearer token every request must carry (empty: none)")
	bindEnv(fs, "token", "TOOLGATE_CODEC_TOKEN")
	return cmd
}

func runCodecServer(ctx context.Context, a *app, o codecServerOptions) error {
	if o.codecKey == "" {
		return badInput(errors.New("--codec-key is required"))
	}
	keys, err := loadKeyring(o.codecKey)
	if err != nil {
		return err
	}
	srv, err := startCodecServer(o.listen, keys, codec.HandlerOptions{AllowedOrigins: o.origins, Token: o.token}, a.logger)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintf(a.out, "codec-server %s\n", srv.url); err != nil {
		return errors.Join(fmt.Errorf("print address: %w", err), srv.stop())
	}
	a.logger.Info("codec server ready; Ctrl-C stops it", zap.String("url", srv.url),
		zap.String("encryptKeyId", keys.CurrentKeyID()), zap.Strings("uiOrigins", o.origins), zap.Bool("token", o.token != ""))
	<-ctx.Done()
	return srv.stop()
}

// codecServer is a running codec HTTP server.
type codecServer struct {
	url  string
	http *http.Server
	done chan struct{}
}

// startCodecServer serves codec.Handler for keys on listen.
func startCodecServer(listen string, keys *codec.Keyring, opts codec.HandlerOptions, logger *zap.Logger) (*codecServer, error) {
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, badInput(fmt.Errorf("listen for the codec server on %s: %w", listen, err))
	}
	s := &codecServer{
		url:  "http://" + ln.Addr().String(),
		http: &http.Server{Handler: codec.Handler(codec.New(keys), opts), ReadHeaderTimeout: 10 * time.Second},
		done: make(chan struct{}),
	}
	go func() {
		defer close(s.done)
		if err := s.http.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("serve codec", zap.Error(err))
		}
	}()
	return s, nil
}

// stop shuts the server down, letting requests in progress finish for up to 5 s.
func (s *codecServer) stop() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := s.http.Shutdown(ctx)
	<-s.done
	if err != nil {
		return fmt.Errorf("stop codec server: %w", err)
	}
	return nil
}
