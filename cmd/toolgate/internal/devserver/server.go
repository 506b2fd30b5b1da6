package devserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"go.temporal.io/server/common/authorization"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/dynamicconfig"
	"go.temporal.io/server/common/log"
	"go.temporal.io/server/temporal"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// startAttempts bounds the retries when a picked port is taken before the server binds it.
const startAttempts = 5

// silent is a log level above every real one: nothing is logged.
const silent = zapcore.FatalLevel + 1

// uiStopTimeout bounds the wait for open UI requests at Stop.
const uiStopTimeout = 2 * time.Second

// Server is a running Temporal server (and optionally the Web UI) inside this process.
// Its methods are safe for concurrent use.
type Server struct {
	temporal  temporal.Server
	ui        *uiServer // nil without Options.UI
	frontend  string
	namespace string
	database  string // the PostgreSQL URL without password, "" on SQLite
	logLevel  zap.AtomicLevel
	metrics   io.Closer // the scope of Options.MetricsRegisterer; nil without

	stopOnce sync.Once
	stopErr  error
}

// Start starts a server as opts say and returns once the frontend answers requests that reach
// the history shard and the namespace has the toolgate search attributes (and, with opts.UI,
// once the UI is listening). ctx bounds the wait for readiness; Start gives up after a minute
// anyway. On error nothing is left running, except what the server library itself leaks (see
// the package doc).
func Start(ctx context.Context, opts Options) (*Server, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	if opts.FrontendPort != 0 {
		if err := checkPortFree(opts.FrontendPort); err != nil {
			return nil, fmt.Errorf("start dev server: frontend %w", err)
		}
	}
	var uiListener net.Listener
	if opts.UI {
		if uiListener, err = listenUI(opts.UIPort); err != nil {
			return nil, fmt.Errorf("start dev server: %w", err)
		}
	}
	closeUIListener := func() {
		if uiListener != nil {
			_ = uiListener.Close()
		}
	}
	store, err := openStore(opts)
	if err != nil {
		closeUIListener()
		return nil, fmt.Errorf("start dev server: %w", err)
	}

	s := &Server{
		namespace: opts.Namespace,
		database:  store.redacted,
		logLevel:  zap.NewAtomicLevelAt(zapcore.WarnLevel),
	}
	if opts.ServerLogLevel != nil {
		s.logLevel.SetLevel(*opts.ServerLogLevel)
	}
	logger := newServerLogger(opts.Logger, s.logLevel)
	pick := func() (servicePorts, error) { return pickPorts(opts.FrontendPort) }
	var ports servicePorts
	serverOpts, metricsScope := metricsOptions(opts.MetricsRegisterer, logger)
	s.metrics = metricsScope
	s.temporal, ports, err = startWithRetry(store, dynamicConfig(opts.DynamicConfig), append(authOptions(opts), serverOpts...), logger, pick, opts.Logger)
	if err != nil {
		closeUIListener()
		s.closeMetrics()
		return nil, fmt.Errorf("start dev server: %w", err)
	}
	s.frontend = hostPort(ports[0])

	if err := waitReady(ctx, s.frontend, s.namespace); err != nil {
		closeUIListener()
		return nil, errors.Join(fmt.Errorf("start dev server: %w", err), s.Stop())
	}
	if uiListener != nil {
		if s.ui, err = startUI(uiListener, s.frontend, s.namespace, opts.UICodecEndpoint, opts.Logger); err != nil {
			return nil, errors.Join(fmt.Errorf("start dev server: %w", err), s.Stop())
		}
	}
	return s, nil
}

// startWithRetry starts a server on the ports pick returns, picking again when one of them was
// taken before the server could bind it.
func startWithRetry(store stores, dc dynamicconfig.StaticClient, auth []temporal.ServerOption, logger log.Logger, pick func() (servicePorts, error), warn *zap.Logger) (temporal.Server, servicePorts, error) {
	for attempt := 1; ; attempt++ {
		ports, err := pick()
		if err != nil {
			return nil, ports, err
		}
		srv, err := startTemporal(store, dc, auth, ports, logger)
		if err == nil {
			return srv, ports, nil
		}
		if !isAddrInUse(err) || attempt == startAttempts {
			return nil, ports, err
		}
		warn.Warn("retry dev server start: a port was taken", zap.Int("attempt", attempt), zap.Error(err))
	}
}

// authOptions returns the server options of Options.ClaimMapper and Authorizer (none without).
func authOptions(opts Options) []temporal.ServerOption {
	if opts.Authorizer == nil {
		return nil
	}
	return []temporal.ServerOption{
		temporal.WithAuthorizer(opts.Authorizer),
		temporal.WithClaimMapper(func(*config.Config) authorization.ClaimMapper { return opts.ClaimMapper }),
	}
}

// pickPorts returns a port per service; the frontend gets frontendPort unless it is 0.
func pickPorts(frontendPort int) (servicePorts, error) {
	var ports servicePorts
	free, err := freePorts(numServices)
	if err != nil {
		return ports, err
	}
	copy(ports[:], free)
	if frontendPort != 0 {
		ports[0] = frontendPort
	}
	return ports, nil
}

// startTemporal builds and starts the server. A port taken under it comes back as an error that
// isAddrInUse recognizes (the server reports it through Logger.Fatal, see serverLogger).
func startTemporal(store stores, dc dynamicconfig.StaticClient, auth []temporal.ServerOption, ports servicePorts, logger log.Logger) (temporal.Server, error) {
	var srv temporal.Server
	err := catchFatal(func() error {
		var err error
		srv, err = temporal.NewServer(append([]temporal.ServerOption{
			temporal.WithConfig(serverConfig(store, ports)),
			temporal.ForServices(temporal.DefaultServices),
			temporal.WithStaticHosts(staticHosts(ports)),
			temporal.WithDynamicConfigClient(dc),
			temporal.WithLogger(logger),
		}, auth...)...)
		if err != nil {
			return fmt.Errorf("create server: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = catchFatal(func() error {
		if err := srv.Start(); err != nil {
			return fmt.Errorf("start server: %w", err)
		}
		return nil
	})
	if err != nil {
		_ = catchFatal(srv.Stop) // release what started; the start error is the one to report
		return nil, err
	}
	return srv, nil
}

// Database is the PostgreSQL store's URL without its password (Options.Postgres), or "" on
// SQLite.
func (s *Server) Database() string {
	return s.database
}

// FrontendAddress is the frontend's "127.0.0.1:port", the address SDK clients and workers dial.
func (s *Server) FrontendAddress() string {
	return s.frontend
}

// UIAddress is the Web UI's "http://127.0.0.1:port", or "" without Options.UI.
func (s *Server) UIAddress() string {
	if s.ui == nil {
		return ""
	}
	return s.ui.Address()
}

// Namespace is the namespace the server created (Options.Namespace or "default").
func (s *Server) Namespace() string {
	return s.namespace
}

// Stop stops the UI, then the server. It is idempotent: later calls return the first call's
// result. The server's warnings about its own shutdown are not logged, and nothing at all after
// Stop returns: the server library leaves goroutines behind (gRPC connections that keep
// redialing the stopped services) and they would log forever.
func (s *Server) Stop() error {
	s.stopOnce.Do(func() {
		var errs []error
		if s.ui != nil {
			ctx, cancel := context.WithTimeout(context.Background(), uiStopTimeout)
			if err := s.ui.stop(ctx); err != nil {
				errs = append(errs, fmt.Errorf("stop UI: %w", err))
			}
			cancel()
		}
		s.logLevel.SetLevel(max(s.logLevel.Level(), zapcore.ErrorLevel))
		if err := catchFatal(s.temporal.Stop); err != nil {
			errs = append(errs, fmt.Errorf("stop server: %w", err))
		}
		s.logLevel.SetLevel(silent)
		s.closeMetrics()
		s.stopErr = errors.Join(errs...)
	})
	return s.stopErr
}

// closeMetrics stops the scope of Options.MetricsRegisterer, if any (its last flush is of no use).
func (s *Server) closeMetrics() {
	if s.metrics != nil {
		_ = s.metrics.Close()
	}
}
