package callbacks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/toolgate/toolgate/internal/clientlimit"
	"github.com/toolgate/toolgate/internal/loopback"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// Defaults of Options.
const (
	// DefaultRequestsPerMinute is how many requests one remote address may make a minute (as
	// many at once): a system calls back once per URL it was given, and retries a few times.
	DefaultRequestsPerMinute = 60
	// DefaultEarlyWait is how long a callback that arrives before its call waits is retried.
	DefaultEarlyWait = 30 * time.Second
	// maxClients bounds the remote addresses the rate limit tracks.
	maxClients = 4096
	// maxContentTypeBytes bounds the content type kept with a body.
	maxContentTypeBytes = 256
	// updateTimeout bounds one update of the call; past it the request is answered 503 and the
	// system may try again.
	updateTimeout = 30 * time.Second
	// retryAfterSeconds is the Retry-After of a 503.
	retryAfterSeconds = 5
)

// Updater sends an update to a workflow: a Temporal client.Client is one.
type Updater interface {
	UpdateWorkflow(ctx context.Context, options client.UpdateWorkflowOptions) (client.WorkflowUpdateHandle, error)
}

// Options configure New.
type Options struct {
	// URL is the public base URL of the endpoint, absolute (https, or http on a loopback host),
	// without query or fragment, such as "https://hooks.example.com/toolgate/callback": a minted
	// URL is URL + "/" + its opaque segment, and the handler answers at every path ending in a
	// segment. Required.
	URL string
	// Keys is where the signing key is read, under KeyName, at every mint and request (a
	// rotated secret is used at once): one key a line, each at least MinKeyBytes; the first
	// seals new URLs and every one opens (add a new key first, drop the old one once its URLs
	// have expired). Every worker and endpoint of a fleet reads the same keys. Required.
	Keys toolcore.SecretSource
	// KeyName is the secret's name. Optional: default DefaultKeyName ("callback_key").
	KeyName string
	// Client answers the calls (wire.UpdateInput). Required.
	Client Updater
	// AllowedHosts are the Host header names (without port) accepted besides the loopback names
	// and URL's host. Optional: default none.
	AllowedHosts []string
	// RequestsPerMinute bounds the requests of one remote address; past it they get 429.
	// Optional: default DefaultRequestsPerMinute.
	RequestsPerMinute int
	// EarlyWait is how long a callback that arrives before its call waits (the attempt that
	// handed the URL out is still ending) is retried before it is refused. Optional: default
	// DefaultEarlyWait.
	EarlyWait time.Duration
	// Logger logs each callback's outcome (workflow ID, key, status; never the URL, token or
	// body). Optional: default none.
	Logger *slog.Logger
	// Now is the clock URLs expire by. Optional: default time.Now.
	Now func() time.Time
}

// now is Options.Now or time.Now.
func (o Options) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

// Endpoint mints callback URLs and serves them. Safe for concurrent use.
type Endpoint struct {
	opts    Options
	base    string // Options.URL without a trailing slash
	limiter *clientlimit.Limiter

	mu   sync.Mutex
	ring *keyring // of the secret value last read
}

// New returns the endpoint of opts. It reads the signing key once, so a missing or short key
// fails here rather than at a tool's first callback.
func New(ctx context.Context, opts Options) (*Endpoint, error) {
	u, err := url.Parse(opts.URL)
	switch {
	case err != nil || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil:
		return nil, fmt.Errorf("callback endpoint: URL %q: want an absolute URL without user, query or fragment", opts.URL)
	case u.Scheme != "https" && (u.Scheme != "http" || !loopback.Host(u.Hostname())):
		return nil, fmt.Errorf("callback endpoint: URL %q: want https (http only on a loopback host)", opts.URL)
	case opts.Keys == nil:
		return nil, errors.New("callback endpoint: Keys (the signing key's secret source) is required")
	case opts.Client == nil:
		return nil, errors.New("callback endpoint: a Temporal client is required")
	case opts.EarlyWait < 0:
		return nil, fmt.Errorf("callback endpoint: EarlyWait %s must not be negative", opts.EarlyWait)
	}
	if opts.KeyName == "" {
		opts.KeyName = DefaultKeyName
	}
	if opts.RequestsPerMinute <= 0 {
		opts.RequestsPerMinute = DefaultRequestsPerMinute
	}
	if opts.EarlyWait == 0 {
		opts.EarlyWait = DefaultEarlyWait
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	opts.AllowedHosts = append(append([]string(nil), opts.AllowedHosts...), u.Hostname())
	e := &Endpoint{opts: opts, base: strings.TrimSuffix(opts.URL, "/"), limiter: clientlimit.New(opts.RequestsPerMinute, maxClients)}
	if _, err := e.keys(ctx); err != nil {
		return nil, fmt.Errorf("callback endpoint: %w", err)
	}
	return e, nil
}

// Path is the path of the endpoint's URL ("" for the root): mount the handler at Path + "/".
func (e *Endpoint) Path() string {
	u, _ := url.Parse(e.base)
	return u.Path
}

// Fixed texts of the answers: the same whatever was sent, never the body.
const (
	textAccepted    = "Callback accepted.\n"
	textGone        = "This callback URL is unknown or has expired, or its call has ended.\n"
	textConflict    = "This callback was answered already, or its call refused it.\n"
	textTooLarge    = "The body is too large.\n"
	textBadType     = "The content type is not understood.\n"
	textUnavailable = "The callback could not be delivered now; try again later.\n"
	textBroken      = "The callback endpoint cannot open callback URLs now.\n"
)

// ServeHTTP answers a request to a callback URL (see the package documentation).
func (e *Endpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !loopback.HostAllowed(r.Host, e.opts.AllowedHosts) {
		reply(w, http.StatusForbidden, "Forbidden: Host not allowed.\n")
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		reply(w, http.StatusMethodNotAllowed, "Method Not Allowed: a callback is a POST.\n")
		return
	}
	if ok, wait := e.limiter.Allow(clientlimit.Address(r), e.opts.now()); !ok {
		w.Header().Set("Retry-After", strconv.Itoa(int(wait.Round(time.Second).Seconds())))
		reply(w, http.StatusTooManyRequests, "Too Many Requests.\n")
		return
	}
	segment := r.URL.Path[strings.LastIndexByte(r.URL.Path, '/')+1:]
	t, err := e.open(r.Context(), segment)
	switch {
	case errors.Is(err, errForged) || errors.Is(err, errExpired):
		e.opts.Logger.Debug("callback refused", "reason", err.Error())
		reply(w, http.StatusGone, textGone)
		return
	case err != nil:
		e.opts.Logger.Error("callback: open the URL", "error", err)
		reply(w, http.StatusInternalServerError, textBroken)
		return
	}
	log := e.opts.Logger.With("workflowId", t.workflowID, "key", t.key)
	if r.ContentLength > toolcore.MaxCallbackBodyBytes {
		w.Header().Set("Connection", "close")
		reply(w, http.StatusRequestEntityTooLarge, textTooLarge)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, toolcore.MaxCallbackBodyBytes))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			reply(w, http.StatusRequestEntityTooLarge, textTooLarge)
			return
		}
		reply(w, http.StatusBadRequest, "The body could not be read.\n")
		return
	}
	contentType := r.Header.Get("Content-Type")
	if contentType != "" {
		if _, _, err := mime.ParseMediaType(contentType); err != nil || len(contentType) > maxContentTypeBytes {
			reply(w, http.StatusUnsupportedMediaType, textBadType)
			return
		}
	}
	answer, err := json.Marshal(toolcore.CallbackResult{ContentType: contentType, Body: body})
	if err != nil {
		reply(w, http.StatusInternalServerError, textBroken)
		return
	}
	// The answer goes on when the sender leaves: it is refused the second time anyway.
	ctx := context.WithoutCancel(r.Context())
	switch status, reason := e.deliver(ctx, t, answer); status {
	case http.StatusOK:
		log.Info("callback answered", "bytes", len(body))
		reply(w, status, textAccepted)
	case http.StatusConflict:
		log.Info("callback refused by its call", "reason", reason)
		reply(w, status, textConflict)
	case http.StatusGone:
		log.Info("callback for a call that has ended", "reason", reason)
		reply(w, status, textGone)
	default:
		log.Warn("callback not delivered", "reason", reason)
		w.Header().Set("Retry-After", strconv.Itoa(retryAfterSeconds))
		reply(w, http.StatusServiceUnavailable, textUnavailable)
	}
}

// deliver answers the call of t with answer and returns the HTTP status that says how it went,
// and why (for the log). A call that does not wait yet is tried again, backing off, for up to
// EarlyWait (never past the URL's expiry).
func (e *Endpoint) deliver(ctx context.Context, t ticket, answer json.RawMessage) (int, string) {
	until := e.opts.now().Add(e.opts.EarlyWait)
	if t.expires.Before(until) {
		until = t.expires
	}
	backoff := 10 * time.Millisecond
	for {
		status, early, reason := e.update(ctx, t, answer)
		if !early {
			return status, reason
		}
		if !e.opts.now().Add(backoff).Before(until) {
			return http.StatusConflict, reason
		}
		timer := time.NewTimer(backoff)
		select {
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			return http.StatusServiceUnavailable, ctx.Err().Error()
		}
		backoff = min(2*backoff, time.Second)
	}
}

// update sends wire.UpdateInput once and maps its outcome: 200 accepted, 410 the call has ended
// (or never existed), 409 refused by the call's validator, 503 not delivered; early is true
// when the call does not wait (yet).
func (e *Endpoint) update(ctx context.Context, t ticket, answer json.RawMessage) (status int, early bool, reason string) {
	ctx, cancel := context.WithTimeout(ctx, updateTimeout)
	defer cancel()
	handle, err := e.opts.Client.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID:   t.workflowID,
		UpdateName:   wire.UpdateInput,
		WaitForStage: client.WorkflowUpdateStageCompleted,
		Args: []any{wire.InputAnswer{
			Responses:     map[string]json.RawMessage{t.key: answer},
			CallbackToken: t.token,
			By:            "callback",
		}},
	})
	if err == nil {
		var accepted wire.InputAccepted
		err = handle.Get(ctx, &accepted)
	}
	var notFound *serviceerror.NotFound
	var appErr *temporal.ApplicationError
	switch {
	case err == nil:
		return http.StatusOK, false, ""
	case errors.As(err, &notFound):
		return http.StatusGone, false, err.Error()
	case errors.As(err, &appErr):
		msg := appErr.Message()
		// The call has not asked yet (no handler) or is running its tool: the attempt that
		// handed the URL out may still be ending.
		early := strings.Contains(msg, "unknown update") || strings.Contains(msg, "not waiting for input")
		return http.StatusConflict, early, msg
	}
	return http.StatusServiceUnavailable, false, err.Error()
}

// reply writes a fixed text answer that no cache keeps and no browser sniffs.
func reply(w http.ResponseWriter, status int, text string) {
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, text)
}
