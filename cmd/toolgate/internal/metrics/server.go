package metrics

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/uber-go/tally/v4"
	tallyprom "github.com/uber-go/tally/v4/prometheus"
	"go.temporal.io/sdk/client"
	sdktally "go.temporal.io/sdk/contrib/tally"
	"go.uber.org/zap"
	"golang.org/x/net/netutil"

	"github.com/toolgate/toolgate/internal/health"
	"github.com/toolgate/toolgate/internal/loopback"
)

// Path is where the metrics are served.
const Path = "/metrics"

// reportInterval is how often tally flushes into the Prometheus registry; a scrape sees values at
// most this old.
const reportInterval = time.Second

// durationBuckets are the histogram buckets of every duration, in seconds: tool calls take from
// milliseconds (validation rejections) to minutes (held calls).
var durationBuckets = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300}

// The endpoint's HTTP limits: a scrape is one small GET.
const (
	readHeaderTimeout = 10 * time.Second
	readTimeout       = 30 * time.Second
	writeTimeout      = time.Minute
	idleTimeout       = 2 * time.Minute
	maxConns          = 64
)

// Options configure Start. They work at their zero value.
type Options struct {
	// Logger receives errors of the reporter and the listener. Optional: default zap.NewNop().
	Logger *zap.Logger
	// AllowedHosts are Host header names (without port, case-insensitive) answered beside
	// localhost and IP addresses; any other name gets 421 Misdirected Request, so a web page that
	// rebinds its DNS name to the endpoint cannot read tool names and counts. Optional: default
	// none.
	AllowedHosts []string
	// AllowNonLoopback lets Start listen on an address that is not loopback (0.0.0.0, :9464, a
	// LAN address): the endpoint has no authentication, so anyone who reaches it reads tool names
	// and counts. Start refuses such an address without it, and logs a warning with it. Optional:
	// default false.
	AllowNonLoopback bool
	// Gatherers are more registries served on Path beside this server's own, such as the
	// embedded Temporal server's (devserver.Options.MetricsRegisterer). A family that fails to
	// gather is left out of the scrape and logged; the rest is served. Optional: default none.
	Gatherers []prometheus.Gatherer
}

// ErrNonLoopback is the error of Start for an address beyond loopback without
// Options.AllowNonLoopback.
var ErrNonLoopback = errors.New("not a loopback address, and the metrics endpoint has no authentication")

// Server serves one Prometheus registry over HTTP.
type Server struct {
	handler  client.MetricsHandler
	logger   *zap.Logger
	registry *prometheus.Registry
	scope    io.Closer
	probe    *health.Probe
	srv      *http.Server
	addr     string
	done     chan struct{}
	counts   *callCounts // nil until CountCalls
}

// Start listens on listen (host:port; port 0 picks a free one) and serves Path, and the probes
// health.LivePath and health.ReadyPath (see package health: they answer any Host; /readyz is not
// ready until Health().SetCheck). An address that is not loopback fails with ErrNonLoopback
// unless opts.AllowNonLoopback.
func Start(listen string, opts Options) (*Server, error) {
	logger := opts.Logger
	if logger == nil {
		logger = zap.NewNop()
	}
	if !loopback.Address(listen) {
		if !opts.AllowNonLoopback {
			return nil, fmt.Errorf("listen for metrics on %s: %w", listen, ErrNonLoopback)
		}
		logger.Warn("metrics endpoint beyond loopback WITHOUT authentication: anyone who reaches it reads tool names and counts", zap.String("listen", listen))
	}
	registry := prometheus.NewRegistry()
	registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	reporter := tallyprom.NewReporter(tallyprom.Options{
		Registerer:              registry,
		DefaultTimerType:        tallyprom.HistogramTimerType,
		DefaultHistogramBuckets: durationBuckets,
		OnRegisterError: func(err error) {
			logger.Warn("register metric", zap.Error(err))
		},
	})
	sanitize := tallyprom.DefaultSanitizerOpts
	sanitize.ValueCharacters = tally.ValidCharacters{Ranges: []tally.SanitizeRange{{' ', '~'}}}
	scope, closer := tally.NewRootScope(tally.ScopeOptions{
		CachedReporter:  reporter,
		Separator:       tallyprom.DefaultSeparator,
		SanitizeOptions: &sanitize,
	}, reportInterval)

	ln, err := net.Listen("tcp", listen)
	if err != nil {
		_ = closer.Close()
		return nil, fmt.Errorf("listen for metrics on %s: %w", listen, err)
	}
	mux := http.NewServeMux()
	gatherers := append(prometheus.Gatherers{registry}, opts.Gatherers...)
	mux.Handle(Path, promhttp.HandlerFor(gatherers, promhttp.HandlerOpts{ErrorLog: zap.NewStdLog(logger), ErrorHandling: promhttp.ContinueOnError}))
	probe := health.NewProbe(health.Options{Logger: logger.Named("health")})
	s := &Server{
		handler:  sdktally.NewMetricsHandler(sdktally.NewPrometheusNamingScope(scope)),
		logger:   logger,
		registry: registry,
		scope:    closer,
		probe:    probe,
		srv: &http.Server{
			Handler:           probe.Wrap(hostsOnly(mux, opts.AllowedHosts)),
			ReadHeaderTimeout: readHeaderTimeout,
			ReadTimeout:       readTimeout,
			WriteTimeout:      writeTimeout,
			IdleTimeout:       idleTimeout,
			ErrorLog:          zap.NewStdLog(logger),
		},
		addr: ln.Addr().String(),
		done: make(chan struct{}),
	}
	ln = netutil.LimitListener(ln, maxConns)
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("serve metrics", zap.Error(err))
		}
	}()
	return s, nil
}

// hostsOnly answers requests whose Host is localhost, an IP address (a scraper that dials an IP
// sends it; no DNS rebinding goes through an IP literal) or one of names; others get 421.
func hostsOnly(next http.Handler, names []string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !hostAllowed(r.Host, names) {
			http.Error(w, "this metrics endpoint answers only to localhost, IP addresses and its allowed host names", http.StatusMisdirectedRequest)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func hostAllowed(host string, names []string) bool {
	if loopback.HostHeader(host) {
		return true
	}
	name, ok := loopback.HostName(host)
	if !ok || name == "" {
		return false
	}
	if ip := net.ParseIP(name); ip != nil {
		return ip.To4() != nil || strings.HasPrefix(host, "[") // IPv6 only in brackets
	}
	return slices.ContainsFunc(names, func(n string) bool { return strings.EqualFold(n, name) })
}

// Health is the probe of health.ReadyPath: set its check once what the process serves is up, and
// call Down when it begins to stop.
func (s *Server) Health() *health.Probe { return s.probe }

// Handler is the SDK MetricsHandler to put in client.Options.MetricsHandler.
func (s *Server) Handler() client.MetricsHandler { return s.handler }

// Addr is the host:port the metrics are served on.
func (s *Server) Addr() string { return s.addr }

// URL is the address to scrape.
func (s *Server) URL() string { return "http://" + s.addr + Path }

// Close stops the call counts, the listener (waiting up to 5 s for scrapes in progress) and the
// reporter.
func (s *Server) Close() error {
	s.probe.Down()
	s.counts.stop()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	<-s.done
	return errors.Join(err, s.scope.Close())
}
