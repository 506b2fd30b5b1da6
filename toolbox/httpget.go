package toolbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel/propagation"
	"go.uber.org/zap"

	"github.com/toolgate/toolgate/toolcore"
)

// httpGetArgs are http_get's validated arguments.
type httpGetArgs struct {
	URL string `json:"url"`
}

// httpGetResult is http_get's output.
type httpGetResult struct {
	// URL is the final URL, after redirects.
	URL    string `json:"url"`
	Status int    `json:"status"`
	// Headers is a subset of the response headers (keptHeaders), lowercase names.
	Headers map[string]string `json:"headers,omitempty"`
	// Body is the response body as text; absent when the body is binary.
	Body *string `json:"body,omitempty"`
	// Binary is true when the body is not UTF-8 text (or holds NUL bytes).
	Binary bool `json:"binary,omitempty"`
	// Truncated is true when Body holds less than the whole response body.
	Truncated bool `json:"truncated"`
}

// keptHeaders are the response headers http_get returns.
var keptHeaders = []string{
	"Content-Type", "Content-Length", "Content-Language", "Last-Modified", "ETag", "Location",
	"Retry-After",
}

// maxShownChars bounds the URL and each header value in a result.
const maxShownChars = 512

// userAgent identifies http_get to servers.
const userAgent = "toolgate-http_get/1"

type httpGetter struct {
	s      settings
	client *http.Client
}

func httpGetTool(s settings) (toolcore.Tool, error) {
	h := newHTTPGetter(s)
	return toolcore.Define(toolcore.Definition[httpGetArgs]{
		Name: NameHTTPGet,
		Description: `Fetch a URL with GET: {"url":"https://example.com/"} gives {"url","status","headers",` +
			`"body","truncated"} (body is text cut to fit the result; binary bodies are left out). ` +
			`Only http and https to public addresses, unless the operator allows more hosts.`,
		Validate: validateHTTPGet,
		InputSchema: json.RawMessage(fmt.Sprintf(`{"type":"object","additionalProperties":false,"required":["url"],`+
			`"properties":{"url":{"type":"string","minLength":1,"description":"An absolute http or https URL (at most %d bytes)."}}}`, MaxURLBytes)),
		OutputSchema: json.RawMessage(`{"type":"object","required":["url","status","truncated"],"properties":{` +
			`"url":{"type":"string","description":"The final URL, after redirects."},"status":{"type":"integer"},` +
			`"headers":{"type":"object","additionalProperties":{"type":"string"},"description":"A subset of the response headers, lowercase names."},` +
			`"body":{"type":"string","description":"The body as text; absent when it is binary."},"binary":{"type":"boolean"},` +
			`"truncated":{"type":"boolean","description":"True when body holds less than the whole response body."}}}`),
		Execute: h.get,
		Options: toolcore.Options{
			SideEffect: toolcore.ReadOnly,
			Timeout:    s.HTTPTimeout + 15*time.Second,
			Secrets:    secretNames(s.auth),
		},
	})
}

func newHTTPGetter(s settings) *httpGetter {
	g := &guard{allow: s.allow, resolver: s.Resolver, timeout: s.HTTPTimeout}
	transport := &http.Transport{
		// No proxy, not even from the environment: a proxy would connect on our behalf and the
		// guard would only ever see the proxy's address.
		Proxy:                  nil,
		DialContext:            g.DialContext,
		ForceAttemptHTTP2:      true,
		TLSHandshakeTimeout:    s.HTTPTimeout,
		ResponseHeaderTimeout:  s.HTTPTimeout,
		MaxResponseHeaderBytes: 64 << 10,
		MaxIdleConns:           16,
		IdleConnTimeout:        90 * time.Second,
	}
	h := &httpGetter{s: s}
	h.client = &http.Client{
		Transport:     transport,
		Timeout:       s.HTTPTimeout,
		CheckRedirect: h.checkRedirect,
	}
	return h
}

// redirectError refuses a redirect target.
type redirectError struct {
	to     string
	reason string
}

func (e *redirectError) Error() string {
	return fmt.Sprintf("refused redirect to %q: the URL %s", e.to, e.reason)
}

// checkRedirect follows at most HTTPMaxRedirects redirects, each to a URL the validator would
// accept; the guard checks the address it connects to. Past the bound the redirect response
// itself is the result, so the model sees the status and location.
func (h *httpGetter) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > h.s.HTTPMaxRedirects {
		return http.ErrUseLastResponse
	}
	if _, reason := checkURL(req.URL.String()); reason != "" {
		return &redirectError{to: shorten(req.URL.String(), maxShownChars), reason: reason}
	}
	return h.authorize(req) // another origin gets none of this one's credentials
}

func validateHTTPGet(args toolcore.Arguments) toolcore.Decision[httpGetArgs] {
	f, reason := readFields(args, "url")
	if reason != "" {
		return toolcore.Reject[httpGetArgs](reason)
	}
	raw, present, reason := f.str("url")
	switch {
	case reason != "":
		return toolcore.Reject[httpGetArgs](reason)
	case !present:
		return toolcore.Reject[httpGetArgs](fmt.Sprintf("%q is required", "url"))
	}
	u, reason := checkURL(raw)
	if reason != "" {
		return toolcore.Reject[httpGetArgs](fmt.Sprintf("%q %s", "url", reason))
	}
	return toolcore.Accept(httpGetArgs{URL: u})
}

// checkURL checks the syntax of a target URL and returns it without fragment, or the reason it
// is refused, phrased to follow a subject ("must use http or https, not \"file\"").
func checkURL(raw string) (string, string) {
	switch {
	case raw == "":
		return "", "must not be empty"
	case len(raw) > MaxURLBytes:
		return "", fmt.Sprintf("must be at most %d bytes", MaxURLBytes)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", "is not a valid URL"
	}
	switch {
	case u.Scheme == "" || u.Opaque != "":
		return "", "must be an absolute http or https URL"
	case u.Scheme != "http" && u.Scheme != "https":
		return "", fmt.Sprintf("must use http or https, not %q", u.Scheme)
	case u.User != nil:
		return "", "must not contain credentials"
	case u.Hostname() == "":
		return "", "must include a host"
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return "", "port must be between 1 and 65535"
		}
	}
	host := u.Hostname()
	if strings.HasPrefix(u.Host, "[") {
		if ip, err := netip.ParseAddr(host); err != nil || !ip.Is6() {
			return "", fmt.Sprintf("host %q is not a valid IPv6 address", host)
		}
	} else if reason := checkHost(host); reason != "" {
		return "", reason
	}
	u.Fragment, u.RawFragment = "", ""
	return u.String(), ""
}

// checkHost accepts canonical dotted-quad IPv4 addresses and ASCII DNS names. Numeric forms
// that resolvers may read as IPv4 ("2130706433", "0177.0.0.1", "0x7f.1", "127.1") are refused,
// so that no name means something other than what it says.
func checkHost(host string) string {
	name := strings.TrimSuffix(host, ".")
	labels := strings.Split(name, ".")
	last := labels[len(labels)-1]
	if isDigits(last) || strings.HasPrefix(strings.ToLower(last), "0x") {
		if ip, err := netip.ParseAddr(host); err != nil || !ip.Is4() {
			return fmt.Sprintf("host %q is not a canonical IP address or DNS name", host)
		}
		return ""
	}
	if reason := checkName(strings.ToLower(name)); reason != "" {
		return fmt.Sprintf("host %q %s", host, reason)
	}
	return ""
}

// checkName checks an ASCII DNS name (lowercase, no trailing dot).
func checkName(name string) string {
	if name == "" || len(name) > 253 {
		return "is not a valid DNS name"
	}
	for _, r := range name {
		if r >= utf8.RuneSelf {
			return "must be ASCII; write international names in punycode (xn--)"
		}
	}
	for _, label := range strings.Split(name, ".") {
		if label == "" || len(label) > 63 {
			return "is not a valid DNS name"
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
				return "is not a valid DNS name"
			}
		}
	}
	return ""
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

func (h *httpGetter) get(ctx context.Context, a httpGetArgs) (any, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.URL, nil)
	if err != nil {
		return nil, fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("User-Agent", userAgent)
	req.Header.Set("Accept", "*/*")
	// The attempt's trace (its execute_tool span) continues at the server: W3C traceparent and
	// tracestate, nothing when ctx carries no span (docs/traces.md).
	propagation.TraceContext{}.Inject(ctx, propagation.HeaderCarrier(req.Header))
	if err := h.authorize(req); err != nil {
		return nil, err
	}
	resp, err := h.client.Do(req)
	if err != nil {
		return nil, h.explain(ctx, a.URL, err)
	}
	defer resp.Body.Close()
	if err := retryLater(a.URL, resp, time.Now()); err != nil {
		return nil, err
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, int64(h.s.HTTPMaxBytes)+1))
	if err != nil {
		return nil, h.explain(ctx, a.URL, err)
	}
	cut := len(body) > h.s.HTTPMaxBytes
	if cut {
		body = body[:h.s.HTTPMaxBytes]
	}
	out := httpGetResult{
		URL:    shorten(resp.Request.URL.String(), maxShownChars),
		Status: resp.StatusCode,
	}
	for _, k := range keptHeaders {
		if v := resp.Header.Get(k); v != "" {
			if out.Headers == nil {
				out.Headers = map[string]string{}
			}
			out.Headers[strings.ToLower(k)] = shorten(v, maxShownChars)
		}
	}
	text, ok := asText(body, !cut)
	if !ok {
		out.Binary, out.Truncated = true, cut
		return out, nil
	}
	return fitText(text, func(shown string, partial bool) any {
		r := out
		r.Body = &shown
		r.Truncated = cut || partial
		return r
	}), nil
}

// retryLater is the error of a 429 or 503 answer that carries Retry-After: toolcore.RetryAfter
// with the delay it asks for (delta-seconds or an HTTP date; cut to toolcore.MaxRetryAfter), so
// the durable path schedules the next attempt then; a malformed or past value is plain Transient
// (the retry policy's backoff). Any other answer, and these two without the header, is nil: the
// status is the result.
func retryLater(target string, resp *http.Response, now time.Time) error {
	value := resp.Header.Get("Retry-After")
	if value == "" || (resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode != http.StatusServiceUnavailable) {
		return nil
	}
	err := fmt.Errorf("GET %q: %s; the server asks to retry after %s", target, resp.Status, shorten(value, 64))
	if isDigits(value) {
		seconds, convErr := strconv.ParseInt(value, 10, 64)
		if convErr != nil || seconds > int64(toolcore.MaxRetryAfter/time.Second) {
			return toolcore.RetryAfter(err, toolcore.MaxRetryAfter) // too many digits to be anything but long
		}
		return toolcore.RetryAfter(err, time.Duration(seconds)*time.Second)
	}
	if at, parseErr := http.ParseTime(value); parseErr == nil {
		return toolcore.RetryAfter(err, at.Sub(now))
	}
	return toolcore.Transient(err)
}

// explain turns a client error into the error the model reads. Refusals are final; timeouts
// and network failures are marked transient (the durable path may retry a ReadOnly tool).
func (h *httpGetter) explain(ctx context.Context, target string, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("http_get: %w", context.Cause(ctx))
	}
	var via string
	var ue *url.Error
	if errors.As(err, &ue) && ue.URL != target {
		via = fmt.Sprintf("redirected to %q: ", shorten(ue.URL, maxShownChars))
	}
	var refused *refusedError
	var redirect *redirectError
	var timeout interface{ Timeout() bool }
	switch {
	case errors.As(err, &refused):
		if refused.addr.IsValid() && !refused.literal {
			h.s.Logger.Info("http_get refused a host name that resolves to a non-public address",
				zap.String("toolCallId", toolcore.ToolCallID(ctx)), zap.String("host", refused.host),
				zap.Stringer("address", refused.addr), zap.String("reason", refused.reason))
		}
		return fmt.Errorf("%s%w", via, refused)
	case errors.As(err, &redirect):
		return redirect
	case errors.As(err, &timeout) && timeout.Timeout():
		return toolcore.Transient(fmt.Errorf("GET %q: %stimed out after %s", target, via, h.s.HTTPTimeout))
	case ue != nil:
		return toolcore.Transient(fmt.Errorf("GET %q: %s%w", target, via, ue.Err))
	default:
		return toolcore.Transient(fmt.Errorf("GET %q: %w", target, err))
	}
}

// asText returns b as text when it is UTF-8 without NUL bytes. When b may continue (complete is
// false), a rune cut at its end is dropped first.
func asText(b []byte, complete bool) (string, bool) {
	if !complete {
		b = trimPartialRune(b)
	}
	if !utf8.Valid(b) || strings.IndexByte(string(b), 0) >= 0 {
		return "", false
	}
	return string(b), true
}

// trimPartialRune drops an incomplete UTF-8 sequence at the end of b.
func trimPartialRune(b []byte) []byte {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return b[:i]
			}
			break
		}
	}
	return b
}

// shorten caps s at n runes, marking a cut with "…".
func shorten(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
