package health

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"go.uber.org/zap"
)

// The probe paths.
const (
	LivePath  = "/healthz"
	ReadyPath = "/readyz"
)

// Defaults of Options.
const (
	DefaultCacheTTL = 2 * time.Second
	DefaultTimeout  = 2 * time.Second
)

// Check reports nil when the listener's process is ready to serve.
type Check func(ctx context.Context) error

// Errors of Probe.Ready.
var (
	// ErrStarting: no check was set yet.
	ErrStarting = errors.New("starting")
	// ErrDown: Down was called, the process is stopping.
	ErrDown = errors.New("stopping")
)

// Options configure NewProbe. They work at their zero value.
type Options struct {
	// Logger receives a line each time readiness changes, with the reason it is lost.
	// Optional: default zap.NewNop().
	Logger *zap.Logger
	// CacheTTL is how long a check's answer is reused. Optional: default 2 s.
	CacheTTL time.Duration
	// Timeout bounds one check. Optional: default 2 s.
	Timeout time.Duration
	// now is the clock; nil is time.Now.
	now func() time.Time
}

// Probe answers the probe paths of one listener. Its methods are safe for concurrent use.
type Probe struct {
	logger   *zap.Logger
	ttl      time.Duration
	timeout  time.Duration
	now      func() time.Time
	mu       sync.Mutex // held while a check runs: concurrent probes wait for its answer
	check    Check
	down     bool
	checked  time.Time // when err was found; zero: never
	err      error
	reported string // the last readiness logged: "ready", or the reason
}

// NewProbe returns a probe that is not ready until SetCheck.
func NewProbe(opts Options) *Probe {
	p := &Probe{logger: opts.Logger, ttl: opts.CacheTTL, timeout: opts.Timeout, now: opts.now}
	if p.logger == nil {
		p.logger = zap.NewNop()
	}
	if p.ttl <= 0 {
		p.ttl = DefaultCacheTTL
	}
	if p.timeout <= 0 {
		p.timeout = DefaultTimeout
	}
	if p.now == nil {
		p.now = time.Now
	}
	return p
}

// SetCheck sets (or replaces) the readiness check; the next probe runs it.
func (p *Probe) SetCheck(check Check) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.check = check
	p.checked = time.Time{}
}

// Down makes the probe not ready for good, at once (no cached answer outlives it): call it when
// the process begins to stop, so a load balancer or rollout stops counting on it while it drains.
func (p *Probe) Down() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = true
	p.report(ErrDown)
}

// Ready runs the check, or returns its answer of less than CacheTTL ago. It returns ErrStarting
// before SetCheck and ErrDown after Down.
func (p *Probe) Ready() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.down:
		return ErrDown
	case p.check == nil:
		return ErrStarting
	}
	now := p.now()
	if !p.checked.IsZero() && now.Sub(p.checked) < p.ttl {
		return p.err
	}
	// Not the probe's request context: a probe that gives up must not cache a failure.
	ctx, cancel := context.WithTimeout(context.Background(), p.timeout)
	err := p.check(ctx)
	cancel()
	p.checked, p.err = p.now(), err
	p.report(err)
	return err
}

// report logs readiness when it changed since the last line.
func (p *Probe) report(err error) {
	state := "ready"
	if err != nil {
		state = err.Error()
	}
	if state == p.reported {
		return
	}
	p.reported = state
	switch {
	case errors.Is(err, ErrDown):
		p.logger.Info("not ready: stopping") // expected, not a fault
		return
	case err != nil:
		p.logger.Warn("not ready", zap.Error(err))
		return
	}
	p.logger.Info("ready")
}

// Wrap serves LivePath and ReadyPath before next sees the request (so before its Host checks
// and authentication) and passes every other request to next.
func (p *Probe) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != LivePath && r.URL.Path != ReadyPath {
			next.ServeHTTP(w, r)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Cache-Control", "no-store")
		if r.URL.Path == LivePath {
			writeText(w, http.StatusOK, "ok")
			return
		}
		if p.Ready() != nil {
			writeText(w, http.StatusServiceUnavailable, "not ready")
			return
		}
		writeText(w, http.StatusOK, "ready")
	})
}

func writeText(w http.ResponseWriter, code int, body string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_, _ = w.Write([]byte(body + "\n"))
}
