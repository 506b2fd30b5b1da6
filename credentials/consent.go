package credentials

import (
	"context"
	"encoding/base64"
	"errors"
	"html/template"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/toolgate/toolgate/internal/clientlimit"
	"github.com/toolgate/toolgate/internal/loopback"
	"github.com/toolgate/toolgate/internal/safetext"
	"github.com/toolgate/toolgate/wire"
)

// Defaults of ConsentOptions.
const (
	// DefaultMaxQueryBytes bounds the query of a request to the consent endpoint (a provider's
	// redirect carries state, code and perhaps an error: well under it).
	DefaultMaxQueryBytes = 4096
	// DefaultConsentRequestsPerMinute is how many requests one client address may make a
	// minute (as many at once): a human completes a consent in one.
	DefaultConsentRequestsPerMinute = 10
	// DefaultConsentClients bounds the client addresses the rate limit tracks.
	DefaultConsentClients = 4096
	// consentWorkTimeout bounds what one redirect does once its state is taken (exchange, store,
	// signals); it goes on when the browser leaves, or the taken consent would be lost.
	consentWorkTimeout = time.Minute
	// maxDescriptionBytes bounds the provider's error description shown on the page.
	maxDescriptionBytes = 200
)

// ConsentOptions configure ConsentHandler.
type ConsentOptions struct {
	// Notify wakes a call waiting for the consent: waiter is its Pending's waiter (a call's
	// workflow ID); sig names the provider, and Refused when the principal refused. A waiter
	// that has ended already should return nil. Required.
	Notify func(ctx context.Context, waiter string, sig wire.ConsentSignal) error
	// AllowedHosts are the Host header names (without port) accepted besides the loopback
	// names: the host of the public redirect URL. Optional: default only loopback names.
	AllowedHosts []string
	// MaxQueryBytes bounds a request's query; a longer one gets 414. Optional: default
	// DefaultMaxQueryBytes.
	MaxQueryBytes int
	// RequestsPerMinute bounds the requests of one client address; past it they get 429.
	// Optional: default DefaultConsentRequestsPerMinute.
	RequestsPerMinute int
	// Logger logs each consent's outcome (provider, principal, how many calls were woken; never a
	// token, code or state). Optional: default none.
	Logger *slog.Logger
}

// ConsentHandler is the consent endpoint: the redirect URI of every provider of o. It answers
// GET ?state=S&code=C (the principal consented) and GET ?state=S&error=E (they did not): it
// takes the pending consent of S (single use; an unknown or expired state gets 410), exchanges C
// with its PKCE verifier, stores the token for the consent's principal and provider (with the
// scopes granted and its expiry), and wakes, through opts.Notify, every call of that principal
// waiting for the provider (Store.TakeWaiting). An error "access_denied" (or another refusal)
// wakes the consent's own calls with ConsentSignal.Refused; a provider that failed
// (server_error, temporarily_unavailable), or a code that could not be exchanged, wakes them
// plainly: they ask again with a new URL.
//
// It needs no authentication: the state is the capability. It answers 403 to a Host that is
// neither loopback nor one of opts.AllowedHosts, 405 to any method but GET, 414 to a query over
// opts.MaxQueryBytes, 429 past opts.RequestsPerMinute of one client address. The page shown is
// fixed text: the provider's name, the principal and an error code, HTML-escaped; never a token
// or code.
func ConsentHandler(o *OAuth, opts ConsentOptions) (http.Handler, error) {
	if o == nil {
		return nil, errors.New("consent endpoint: an OAuth client is required")
	}
	if opts.Notify == nil {
		return nil, errors.New("consent endpoint: Notify is required")
	}
	if opts.MaxQueryBytes <= 0 {
		opts.MaxQueryBytes = DefaultMaxQueryBytes
	}
	if opts.RequestsPerMinute <= 0 {
		opts.RequestsPerMinute = DefaultConsentRequestsPerMinute
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &consentHandler{oauth: o, opts: opts, limiter: clientlimit.New(opts.RequestsPerMinute, DefaultConsentClients)}, nil
}

type consentHandler struct {
	oauth   *OAuth
	opts    ConsentOptions
	limiter *clientlimit.Limiter
}

func (h *consentHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !loopback.HostAllowed(r.Host, h.opts.AllowedHosts) {
		http.Error(w, "Forbidden: Host not allowed", http.StatusForbidden)
		return
	}
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", http.MethodGet)
		http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
		return
	}
	if len(r.URL.RawQuery) > h.opts.MaxQueryBytes {
		http.Error(w, "URI Too Long", http.StatusRequestURITooLong)
		return
	}
	if ok, wait := h.limiter.Allow(clientlimit.Address(r), h.oauth.now()); !ok {
		w.Header().Set("Retry-After", strconv.Itoa(int(wait.Round(time.Second).Seconds())))
		http.Error(w, "Too Many Requests", http.StatusTooManyRequests)
		return
	}
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil || len(q["state"]) > 1 || len(q["code"]) > 1 || len(q["error"]) > 1 {
		h.page(w, http.StatusBadRequest, page{Title: "Consent link not understood", Text: textMalformed})
		return
	}
	state, code, refusal := q.Get("state"), q.Get("code"), q.Get("error")
	if state == "" {
		h.page(w, http.StatusBadRequest, page{Title: "Consent link not understood", Text: textMalformed})
		return
	}
	// The state is taken now: the rest runs to its end even if the browser leaves.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), consentWorkTimeout)
	defer cancel()
	if !wellFormedState(state) {
		h.page(w, http.StatusGone, page{Title: "Consent link expired", Text: textGone}) // as an unknown state: no store read
		return
	}
	p, found, err := h.oauth.store.TakePending(ctx, state)
	if err != nil {
		h.opts.Logger.Warn("consent: take the pending consent", "error", err)
		h.page(w, http.StatusInternalServerError, page{Title: "Consent not recorded", Text: textStoreFailed})
		return
	}
	if !found || !p.Expires.After(h.oauth.now()) {
		h.page(w, http.StatusGone, page{Title: "Consent link expired", Text: textGone})
		return
	}
	view := page{Provider: p.Provider, Principal: displayText(p.Principal, 256)}
	log := h.opts.Logger.With("provider", p.Provider, "principal", p.Principal)
	if refusal != "" {
		h.refused(ctx, w, p, refusal, q.Get("error_description"), view, log)
		return
	}
	if code == "" {
		h.wake(ctx, p.Waiters, wire.ConsentSignal{Provider: p.Provider}, log)
		view.Title, view.Text = "Consent link not understood", textMalformedRetry
		h.page(w, http.StatusBadRequest, view)
		return
	}
	token, err := h.oauth.exchange(ctx, p, code)
	if err != nil {
		log.Warn("consent: code exchange failed", "error", err)
		h.wake(ctx, p.Waiters, wire.ConsentSignal{Provider: p.Provider}, log)
		view.Title, view.Text = "Consent not completed", textExchangeFailed
		h.page(w, http.StatusBadGateway, view)
		return
	}
	if err := h.oauth.store.Put(ctx, p.Principal, p.Provider, token); err != nil {
		log.Warn("consent: store the token", "error", err)
		h.wake(ctx, p.Waiters, wire.ConsentSignal{Provider: p.Provider}, log)
		view.Title, view.Text = "Consent not recorded", textStoreFailed
		h.page(w, http.StatusInternalServerError, view)
		return
	}
	waiters := slices.Clone(p.Waiters)
	others, err := h.oauth.store.TakeWaiting(ctx, p.Principal, p.Provider)
	if err != nil {
		log.Warn("consent: take the other waiting calls", "error", err)
	}
	for _, o := range others {
		waiters = append(waiters, o.Waiters...)
	}
	woken := h.wake(ctx, waiters, wire.ConsentSignal{Provider: p.Provider}, log)
	log.Info("consent given", "scopes", token.Scopes, "calls", woken)
	view.Title, view.Text = "Consent recorded", textGiven
	if !hasScopes(token, p.Scopes) {
		view.Text = textGivenNarrowed
	}
	h.page(w, http.StatusOK, view)
}

// refused handles a redirect with an error: the principal refused (access_denied and the other
// final errors end the consent's calls) or the provider failed (they ask again).
func (h *consentHandler) refused(ctx context.Context, w http.ResponseWriter, p Pending, refusal, description string, view page, log *slog.Logger) {
	code := errorCode(refusal)
	if code == "" {
		code = "invalid_request" // the provider's code was not one the RFC allows
	}
	view.Code, view.Description = code, displayText(description, maxDescriptionBytes)
	switch code {
	case "server_error", "temporarily_unavailable":
		h.wake(ctx, p.Waiters, wire.ConsentSignal{Provider: p.Provider}, log)
		log.Info("consent failed at the provider", "code", code)
		view.Title, view.Text = "Consent not completed", textProviderFailed
		h.page(w, http.StatusBadGateway, view)
		return
	}
	woken := h.wake(ctx, p.Waiters, wire.ConsentSignal{Provider: p.Provider, Refused: code}, log)
	log.Info("consent refused", "code", code, "calls", woken)
	view.Title, view.Text = "Consent refused", textRefused
	h.page(w, http.StatusOK, view)
}

// wake notifies each distinct waiter and returns how many were notified; a failure is logged,
// never shown (the call then waits for its consent timeout).
func (h *consentHandler) wake(ctx context.Context, waiters []string, sig wire.ConsentSignal, log *slog.Logger) int {
	n := 0
	for i, waiter := range waiters {
		if waiter == "" || slices.Contains(waiters[:i], waiter) {
			continue
		}
		if err := h.opts.Notify(ctx, waiter, sig); err != nil {
			log.Warn("consent: wake a waiting call", "waiter", waiter, "error", err)
			continue
		}
		n++
	}
	return n
}

// Fixed texts of the page.
const (
	textMalformed      = "This link is not a complete consent redirect. Open the newest consent link the waiting call shows."
	textMalformedRetry = "The provider's redirect carried no authorization code. The waiting call asks again with a new consent link."
	textGone           = "This consent link has expired or was used already. If you did not use it, someone else may have: have the token revoked (toolgate credentials revoke) and the call run again."
	textStoreFailed    = "The consent could not be recorded. The waiting call asks again with a new consent link."
	textExchangeFailed = "The provider did not accept the consent. The waiting call asks again with a new consent link."
	textProviderFailed = "The provider could not complete the consent. The waiting call asks again with a new consent link."
	textRefused        = "Consent was refused. The call that waited for it ends without running its tool."
	textGiven          = "Consent recorded. The calls that waited for it go on; you may close this page."
	textGivenNarrowed  = "Consent recorded, but with fewer permissions than the call asked for: it will ask again for the rest."
)

// page is what the consent endpoint shows; every field is escaped by the template.
type page struct {
	Title, Text, Provider, Principal, Code, Description string
}

var pageTemplate = template.Must(template.New("consent").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="referrer" content="no-referrer"><title>{{.Title}} - toolgate</title></head>
<body><h1>{{.Title}}</h1><p>{{.Text}}</p>
{{- if .Provider}}<p>Provider: <code>{{.Provider}}</code></p>{{end}}
{{- if .Principal}}<p>For: <code>{{.Principal}}</code></p>{{end}}
{{- if .Code}}<p>The provider said: <code>{{.Code}}</code>{{if .Description}}: {{.Description}}{{end}}</p>{{end}}
</body></html>
`))

// page writes view with status; the headers keep the page (whose URL held the code and state)
// out of caches and referrers, and forbid scripts and framing.
func (h *consentHandler) page(w http.ResponseWriter, status int, view page) {
	hd := w.Header()
	hd.Set("Content-Type", "text/html; charset=utf-8")
	hd.Set("Cache-Control", "no-store")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'")
	w.WriteHeader(status)
	_ = pageTemplate.Execute(w, view)
}

// displayText is s for the page: invisible and control characters escaped, cut to at most n
// bytes on a character boundary (the template escapes HTML).
func displayText(s string, n int) string {
	if len(s) > n {
		cut := n
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "..."
	}
	escaped, _ := safetext.Escape(s)
	return escaped
}

// wellFormedState reports whether state could be one randomState made: stateBytes in base64url
// without padding.
func wellFormedState(state string) bool {
	if len(state) != base64.RawURLEncoding.EncodedLen(stateBytes) {
		return false
	}
	_, err := base64.RawURLEncoding.DecodeString(state)
	return err == nil
}
