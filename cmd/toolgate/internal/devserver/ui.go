package devserver

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
	"github.com/temporalio/ui-server/v2/server/api"
	"github.com/temporalio/ui-server/v2/server/auth"
	uiconfig "github.com/temporalio/ui-server/v2/server/config"
	"github.com/temporalio/ui-server/v2/server/cors"
	"github.com/temporalio/ui-server/v2/server/csrf"
	"github.com/temporalio/ui-server/v2/server/headers"
	"github.com/temporalio/ui-server/v2/server/route"
	"github.com/temporalio/ui-server/v2/server/rpc"
	"github.com/temporalio/ui-server/v2/ui"
	"go.temporal.io/api/workflowservice/v1"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"golang.org/x/net/netutil"
	"google.golang.org/grpc"
)

// uiServer is the Temporal Web UI, served from this process.
//
// It assembles the same echo routes and middleware as ui-server's server.NewServer (v2.55.0)
// instead of calling it, because that server cannot be embedded cleanly: Start calls
// Logger.Fatal (os.Exit) when the port is taken, and Stop never closes its gRPC connection to
// the frontend. Here the listener is bound before anything else (no port race) and Stop closes
// both. Re-check this against server.NewServer when upgrading ui-server.
type uiServer struct {
	http *http.Server
	conn *grpc.ClientConn
	addr string
	done chan struct{}
}

// listenUI binds the UI's port on 127.0.0.1 (0 picks a free port), before the server starts, so
// a taken port fails Start at once.
func listenUI(port int) (net.Listener, error) {
	ln, err := net.Listen("tcp", hostPort(port))
	if err != nil {
		return nil, fmt.Errorf("listen for UI: %w", err)
	}
	return ln, nil
}

// The UI server's limits: a browser opens a few connections; its API requests are small JSON
// bodies (a signal's or a reset's input at most, which the frontend bounds at 4 MiB anyway). No
// WriteTimeout: a long-poll answer may take longer than any fixed bound.
const (
	uiMaxConns     = 256
	uiMaxBodyBytes = 4 << 20
)

// startUI serves the UI for the frontend at frontend on ln. It owns ln, also on error.
func startUI(ln net.Listener, frontend, namespace, codecEndpoint string, logger *zap.Logger) (*uiServer, error) {
	port := ln.Addr().(*net.TCPAddr).Port
	cfg := &uiconfig.Config{
		TemporalGRPCAddress: frontend,
		Host:                loopback,
		Port:                port,
		EnableUI:            true,
		DefaultNamespace:    namespace,
		DisableNewsFetch:    true, // no network calls from a dev tool
		NotifyOnNewVersion:  false,
		HideLogs:            true,
		// Plain HTTP on loopback: a Secure CSRF cookie would never come back.
		CORS: uiconfig.CORS{CookieInsecure: true},
		// Credentials: a codec server with a token accepts the session cookie of its /login.
		Codec: uiconfig.Codec{Endpoint: codecEndpoint, IncludeCredentials: true},
	}
	handler, conn, err := newUIHandler(cfg, logger)
	if err != nil {
		_ = ln.Close()
		return nil, err
	}
	errLog, err := zap.NewStdLogAt(logger, zapcore.WarnLevel)
	if err != nil {
		_ = ln.Close()
		_ = conn.Close()
		return nil, fmt.Errorf("create UI error log: %w", err)
	}
	s := &uiServer{
		http: &http.Server{
			Handler:           loopbackHostsOnly(limitBody(handler, uiMaxBodyBytes)),
			ReadHeaderTimeout: 10 * time.Second,
			ReadTimeout:       time.Minute,
			IdleTimeout:       2 * time.Minute,
			ErrorLog:          errLog,
		},
		conn: conn,
		addr: "http://" + net.JoinHostPort(loopback, strconv.Itoa(port)),
		done: make(chan struct{}),
	}
	ln = netutil.LimitListener(ln, uiMaxConns)
	go func() {
		defer close(s.done)
		if err := s.http.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("serve UI", zap.Error(err))
		}
	}()
	return s, nil
}

// limitBody refuses a request whose Content-Length is over limit with 413 before next sees it,
// and stops next reading any other body (chunked) past limit: its read fails with
// *http.MaxBytesError and the connection is closed after the response.
func limitBody(next http.Handler, limit int64) http.Handler {
	limited := http.MaxBytesHandler(next, limit)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > limit {
			w.Header().Set("Connection", "close") // the body is never read
			http.Error(w, fmt.Sprintf("request body over %d bytes", limit), http.StatusRequestEntityTooLarge)
			return
		}
		limited.ServeHTTP(w, r)
	})
}

// loopbackHostsOnly serves only requests whose Host names the loopback interface: localhost,
// 127.0.0.1 or [::1], with or without a port. The UI proxies the whole WorkflowService, write
// actions included, so a web page that rebinds its own DNS name to 127.0.0.1 must not reach it:
// the browser still sends that name as Host, and gets 421 Misdirected Request.
func loopbackHostsOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !isLoopbackHost(r.Host) {
			http.Error(w, "this Temporal UI answers only to localhost, 127.0.0.1 and [::1]", http.StatusMisdirectedRequest)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// isLoopbackHost reports whether a Host header value is localhost, 127.0.0.1 or [::1], with an
// optional port. Other spellings (127.1, 2130706433, localhost., sub.localhost) are refused: none
// is needed to open the UI, and each is a name some resolver may give another meaning.
func isLoopbackHost(host string) bool {
	name := host
	if h, port, err := net.SplitHostPort(host); err == nil {
		if _, err := strconv.ParseUint(port, 10, 16); err != nil {
			return false
		}
		name = h
	} else if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		name = host[1 : len(host)-1]
	}
	switch strings.ToLower(name) {
	case "localhost", "127.0.0.1", "::1":
		return name != "::1" || strings.HasPrefix(host, "[")
	}
	return false
}

// newUIHandler builds the UI's echo handler and the gRPC connection it uses, mirroring
// ui-server's server.NewServer and route.SetAPIRoutes.
func newUIHandler(cfg *uiconfig.Config, logger *zap.Logger) (http.Handler, *grpc.ClientConn, error) {
	cfgProvider, err := uiconfig.NewConfigProviderWithRefresh(cfg) // RefreshInterval 0: no goroutine
	if err != nil {
		return nil, nil, fmt.Errorf("configure UI: %w", err)
	}
	assets, err := ui.Assets()
	if err != nil {
		return nil, nil, fmt.Errorf("load UI assets: %w", err)
	}
	assets, err = fs.Sub(assets, "local")
	if err != nil {
		return nil, nil, fmt.Errorf("load UI assets: %w", err)
	}
	conn, err := rpc.Dial(cfg.TemporalGRPCAddress, nil) // lazy: does not wait for the frontend
	if err != nil {
		return nil, nil, fmt.Errorf("dial frontend for UI: %w", err)
	}

	e := echo.New()
	e.HideBanner = true
	e.HidePort = true
	if stdLog, err := zap.NewStdLogAt(logger, zapcore.WarnLevel); err == nil {
		e.Logger.SetOutput(stdLog.Writer())
	}
	cookieSecure := !cfg.CORS.CookieInsecure
	e.Use(middleware.Recover())
	e.Use(middleware.Gzip())
	e.Use(cors.CORSMiddleware(cors.CORSConfig{
		AllowHeaders: []string{
			echo.HeaderOrigin, echo.HeaderContentType, echo.HeaderAccept,
			echo.HeaderXCSRFToken, echo.HeaderAuthorization, auth.AuthorizationExtrasHeader,
			"Caller-Type",
		},
		AllowCredentials: true,
		ConfigProvider:   cfgProvider,
	}))
	e.Use(middleware.Secure())
	e.Use(csrf.EnsureTokenCookie(cookieSecure))
	e.Use(middleware.CSRFWithConfig(csrf.MiddlewareConfig(cfgProvider, cookieSecure)))
	e.Pre(route.PublicPath(cfg.PublicPath))

	route.SetHealthRoute(e)

	apiMiddleware := []api.Middleware{
		headers.WithForwardHeaders([]string{auth.AuthorizationExtrasHeader, "Caller-Type"}),
	}
	group := e.Group("/api/v1")
	group.GET("/settings", api.GetSettings(cfgProvider))
	group.GET("/releases", api.GetLatestReleases(cfgProvider, api.NewReleaseChecker()))
	group.GET("/ui-extensions", api.GetUIExtensions(cfgProvider, api.TemporalAccessCheck(conn, apiMiddleware)))
	writeControl := route.DisableWriteMiddleware(cfgProvider)
	group.GET(api.WorkflowRawHistoryUrl,
		api.WorkflowRawHistoryHandler(workflowservice.NewWorkflowServiceClient(conn)), writeControl)
	group.Match([]string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete},
		"/*", api.TemporalAPIHandler(cfgProvider, apiMiddleware, conn), writeControl)

	route.SetAuthRoutes(e, cfgProvider)
	if err := route.SetUIRoutes(e, cfg.PublicPath, assets, cfgProvider); err != nil {
		_ = conn.Close()
		return nil, nil, fmt.Errorf("set UI routes: %w", err)
	}
	route.SetRenderRoute(e, "/")
	return e, conn, nil
}

// Address is "http://127.0.0.1:port".
func (s *uiServer) Address() string {
	return s.addr
}

// stop closes the listener and every connection, then the gRPC connection to the frontend.
func (s *uiServer) stop(ctx context.Context) error {
	err := s.http.Shutdown(ctx)
	if err != nil {
		err = errors.Join(err, s.http.Close())
	}
	<-s.done
	return errors.Join(err, s.conn.Close())
}
