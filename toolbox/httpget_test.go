package toolbox

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/toolgate/toolgate/toolcore"
)

// testServer is an httptest server that counts the requests it serves.
type testServer struct {
	*httptest.Server
	hits atomic.Int64
}

func newTestServer(t *testing.T, h http.HandlerFunc) *testServer {
	t.Helper()
	s := &testServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		h(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

// hostPort is the server's "127.0.0.1:port".
func (s *testServer) hostPort() string { return s.Listener.Addr().String() }

func (s *testServer) port() string {
	return fmt.Sprint(netip.MustParseAddrPort(s.hostPort()).Port())
}

func textHandler(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Set-Cookie", "session=secret")
		_, _ = w.Write([]byte(body))
	}
}

// httpResult mirrors httpGetResult for decoding content.
type httpResult struct {
	URL       string            `json:"url"`
	Status    int               `json:"status"`
	Headers   map[string]string `json:"headers"`
	Body      *string           `json:"body"`
	Binary    bool              `json:"binary"`
	Truncated bool              `json:"truncated"`
}

func getURL(t *testing.T, reg *toolcore.Registry, url string) toolcore.Result {
	t.Helper()
	return run(t, reg, NameHTTPGet, fmt.Sprintf(`{"url":%q}`, url))
}

func TestHTTPGetAllowedHost(t *testing.T) {
	srv := newTestServer(t, textHandler("hello from the test server"))
	reg := newTestRegistry(t, Config{AllowHosts: []string{srv.hostPort()}})
	var got httpResult
	requireOK(t, getURL(t, reg, srv.URL+"/page#frag"), &got)
	assert.Equal(t, srv.URL+"/page", got.URL)
	assert.Equal(t, 200, got.Status)
	require.NotNil(t, got.Body)
	assert.Equal(t, "hello from the test server", *got.Body)
	assert.False(t, got.Truncated)
	assert.Equal(t, "text/plain; charset=utf-8", got.Headers["content-type"])
	assert.NotContains(t, got.Headers, "set-cookie")
	assert.EqualValues(t, 1, srv.hits.Load())
}

func TestHTTPGetStatusIsAResult(t *testing.T) {
	srv := newTestServer(t, func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "nope", http.StatusNotFound)
	})
	reg := newTestRegistry(t, Config{AllowHosts: []string{srv.hostPort()}})
	var got httpResult
	requireOK(t, getURL(t, reg, srv.URL), &got)
	assert.Equal(t, 404, got.Status)
	assert.Equal(t, "nope\n", *got.Body)
}

func TestHTTPGetAllowByPrefixAndName(t *testing.T) {
	srv := newTestServer(t, textHandler("ok"))
	resolver := fakeResolver{"svc.test": {netip.MustParseAddr("127.0.0.1")}}
	tests := []struct {
		name  string
		allow []string
		url   string
	}{
		{"cidr", []string{"127.0.0.0/8"}, srv.URL},
		{"ip any port", []string{"127.0.0.1"}, srv.URL},
		{"name with port", []string{"svc.test:" + srv.port()}, "http://svc.test:" + srv.port() + "/"},
		{"wildcard name", []string{"*.test"}, "http://svc.test:" + srv.port() + "/"},
		{"name resolving to an allowed address", []string{srv.hostPort()}, "http://svc.test:" + srv.port() + "/"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg := newTestRegistry(t, Config{AllowHosts: tt.allow, Resolver: resolver})
			var got httpResult
			requireOK(t, getURL(t, reg, tt.url), &got)
			assert.Equal(t, "ok", *got.Body)
		})
	}
}

func TestHTTPGetRefusesInternalAddresses(t *testing.T) {
	srv := newTestServer(t, textHandler("internal"))
	p := srv.port()
	resolver := fakeResolver{
		"rebind.test":  {netip.MustParseAddr("127.0.0.1")},
		"private.test": {netip.MustParseAddr("10.0.0.8")},
	}
	// Another server is allowed, so the allow list is not empty but does not cover srv.
	other := newTestServer(t, textHandler("other"))
	reg := newTestRegistry(t, Config{Resolver: resolver, AllowHosts: []string{other.hostPort()}})
	hint := "; http_get reaches only public addresses unless the operator allows the host"
	tests := []struct {
		name string
		url  string
		want string
	}{
		{"loopback", "http://127.0.0.1:" + p + "/", `refused host "127.0.0.1": 127.0.0.1 is a loopback address`},
		{"loopback v6", "http://[::1]:" + p + "/", `refused host "::1": ::1 is a loopback address`},
		{"mapped v6", "http://[::ffff:127.0.0.1]:" + p + "/", `refused host "::ffff:127.0.0.1": 127.0.0.1 is a loopback address`},
		{"nat64", "http://[64:ff9b::7f00:1]:" + p + "/", `refused host "64:ff9b::7f00:1": 64:ff9b::7f00:1 is a loopback address`},
		{"localhost", "http://localhost:" + p + "/", `refused host "localhost": a name reserved for the local host`},
		{"localhost dot", "http://localhost.:" + p + "/", `refused host "localhost.": a name reserved for the local host`},
		{"sub localhost", "http://app.localhost:" + p + "/", `refused host "app.localhost": a name reserved for the local host`},
		{"name resolving to loopback", "http://rebind.test:" + p + "/", `refused host "rebind.test": it does not resolve to a public address`},
		{"name resolving private", "http://private.test/", `refused host "private.test": it does not resolve to a public address`},
		{"private 10", "http://10.0.0.1/", `refused host "10.0.0.1": 10.0.0.1 is a private address`},
		{"private 192.168", "http://192.168.1.1/", `refused host "192.168.1.1": 192.168.1.1 is a private address`},
		{"private 172", "http://172.16.5.4/", `refused host "172.16.5.4": 172.16.5.4 is a private address`},
		{"metadata", "http://169.254.169.254/latest/meta-data/", `refused host "169.254.169.254": 169.254.169.254 is a cloud metadata address`},
		{"metadata v6", "http://[fd00:ec2::254]/", `refused host "fd00:ec2::254": fd00:ec2::254 is a cloud metadata address`},
		{"metadata name", "http://metadata.google.internal/computeMetadata/v1/", `refused host "metadata.google.internal": a name reserved for private or cloud metadata use`},
		{"cgnat", "http://100.64.0.1/", `refused host "100.64.0.1": 100.64.0.1 is a carrier-grade NAT address`},
		{"unspecified", "http://0.0.0.0:" + p + "/", `refused host "0.0.0.0": 0.0.0.0 is an unspecified address`},
		{"unspecified v6", "http://[::]:" + p + "/", `refused host "::": :: is an unspecified address`},
		{"multicast", "http://224.0.0.1/", `refused host "224.0.0.1": 224.0.0.1 is a multicast address`},
		{"broadcast", "http://255.255.255.255/", `refused host "255.255.255.255": 255.255.255.255 is a broadcast address`},
		{"link-local", "http://169.254.10.10/", `refused host "169.254.10.10": 169.254.10.10 is a link-local address`},
		{"link-local v6", "http://[fe80::1]/", `refused host "fe80::1": fe80::1 is a link-local address`},
		{"ula", "http://[fc00::1]/", `refused host "fc00::1": fc00::1 is a private address`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg := requireError(t, getURL(t, reg, tt.url), toolcore.CodeToolExecutionFailed)
			assert.Equal(t, tt.want+hint, msg)
		})
	}
	assert.Zero(t, srv.hits.Load(), "no request may reach the refused server")
	assert.Zero(t, other.hits.Load())
}

func TestHTTPGetRejects(t *testing.T) {
	assertRejects(t, newTestRegistry(t, Config{}), NameHTTPGet, []rejectCase{
		{"missing", `{}`, `"url" is required`},
		{"number", `{"url":1}`, `"url" must be a string, not a number`},
		{"unknown", `{"url":"http://example.com/","method":"POST"}`, `unknown argument "method"; allowed: "url"`},
		{"empty", `{"url":""}`, `"url" must not be empty`},
		{"too long", `{"url":"http://example.com/` + strings.Repeat("a", MaxURLBytes) + `"}`, `"url" must be at most 2048 bytes`},
		{"file", `{"url":"file:///etc/passwd"}`, `"url" must use http or https, not "file"`},
		{"ftp", `{"url":"ftp://example.com/"}`, `"url" must use http or https, not "ftp"`},
		{"gopher", `{"url":"gopher://127.0.0.1:25/"}`, `"url" must use http or https, not "gopher"`},
		{"javascript", `{"url":"javascript:alert(1)"}`, `"url" must be an absolute http or https URL`},
		{"relative", `{"url":"/etc/passwd"}`, `"url" must be an absolute http or https URL`},
		{"no host", `{"url":"http:///path"}`, `"url" must include a host`},
		{"credentials", `{"url":"http://user:pw@example.com/"}`, `"url" must not contain credentials`},
		{"credentials confusion", `{"url":"http://example.com@127.0.0.1/"}`, `"url" must not contain credentials`},
		{"decimal ip", `{"url":"http://2130706433/"}`, `"url" host "2130706433" is not a canonical IP address or DNS name`},
		{"octal ip", `{"url":"http://0177.0.0.1/"}`, `"url" host "0177.0.0.1" is not a canonical IP address or DNS name`},
		{"hex ip", `{"url":"http://0x7f000001/"}`, `"url" host "0x7f000001" is not a canonical IP address or DNS name`},
		{"short ip", `{"url":"http://127.1/"}`, `"url" host "127.1" is not a canonical IP address or DNS name`},
		{"unicode host", `{"url":"http://bücher.de/"}`, `"url" host "bücher.de" must be ASCII; write international names in punycode (xn--)`},
		{"port zero", `{"url":"http://example.com:0/"}`, `"url" port must be between 1 and 65535`},
		{"port too big", `{"url":"http://example.com:99999/"}`, `"url" port must be between 1 and 65535`},
		{"space in host", `{"url":"http://exa mple.com/"}`, `"url" is not a valid URL`},
	})
}

func TestHTTPGetRedirects(t *testing.T) {
	refused := newTestServer(t, textHandler("must not be reached"))
	final := "ok after redirect"
	var allowed *testServer
	allowed = newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/to-self":
			http.Redirect(w, r, "/final", http.StatusFound)
		case "/final":
			textHandler(final)(w, r)
		case "/to-other-port":
			http.Redirect(w, r, refused.URL+"/", http.StatusFound)
		case "/to-localhost":
			http.Redirect(w, r, "http://localhost:"+allowed.port()+"/final", http.StatusFound)
		case "/to-v6-loopback":
			http.Redirect(w, r, "http://[::1]:"+allowed.port()+"/final", http.StatusFound)
		case "/to-metadata":
			http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
		case "/to-decimal":
			http.Redirect(w, r, "http://2130706433:"+allowed.port()+"/final", http.StatusFound)
		case "/to-file":
			http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
		case "/loop":
			http.Redirect(w, r, "/loop", http.StatusFound)
		}
	})
	reg := newTestRegistry(t, Config{AllowHosts: []string{allowed.hostPort()}, HTTPMaxRedirects: 2})

	var got httpResult
	requireOK(t, getURL(t, reg, allowed.URL+"/to-self"), &got)
	assert.Equal(t, final, *got.Body)
	assert.Equal(t, allowed.URL+"/final", got.URL)

	tests := []struct {
		path string
		want string
	}{
		{"/to-other-port", fmt.Sprintf(`redirected to %q: refused host "127.0.0.1": 127.0.0.1 is a loopback address`, refused.URL+"/")},
		{"/to-localhost", `refused host "localhost": a name reserved for the local host`},
		{"/to-v6-loopback", `refused host "::1": ::1 is a loopback address`},
		{"/to-metadata", `refused host "169.254.169.254": 169.254.169.254 is a cloud metadata address`},
		{"/to-decimal", `refused redirect to "http://2130706433:` + allowed.port() + `/final": the URL host "2130706433" is not a canonical IP address or DNS name`},
		{"/to-file", `refused redirect to "file:///etc/passwd": the URL must use http or https, not "file"`},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			msg := requireError(t, getURL(t, reg, allowed.URL+tt.path), toolcore.CodeToolExecutionFailed)
			assert.Contains(t, msg, tt.want)
		})
	}
	assert.Zero(t, refused.hits.Load(), "the redirect target must not be reached")

	// Past the bound the redirect itself is the result.
	before := allowed.hits.Load()
	requireOK(t, getURL(t, reg, allowed.URL+"/loop"), &got)
	assert.Equal(t, http.StatusFound, got.Status)
	assert.Equal(t, "/loop", got.Headers["location"])
	assert.EqualValues(t, 3, allowed.hits.Load()-before, "first request and two redirects")
}

func TestHTTPGetRedirectFromTrustedNameToItsIP(t *testing.T) {
	var srv *testServer
	srv = newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Host == srv.hostPort() {
			textHandler("reached by IP")(w, r)
			return
		}
		http.Redirect(w, r, srv.URL+"/", http.StatusFound)
	})
	reg := newTestRegistry(t, Config{
		AllowHosts: []string{"svc.test:" + srv.port()},
		Resolver:   fakeResolver{"svc.test": {netip.MustParseAddr("127.0.0.1")}},
	})
	msg := requireError(t, getURL(t, reg, "http://svc.test:"+srv.port()+"/"), toolcore.CodeToolExecutionFailed)
	assert.Contains(t, msg, `refused host "127.0.0.1": 127.0.0.1 is a loopback address`)
	assert.EqualValues(t, 1, srv.hits.Load())
}

func TestHTTPGetBodyBounds(t *testing.T) {
	big := strings.Repeat("a", 200<<10)
	tests := []struct {
		name      string
		body      string
		maxBytes  int
		wantBody  string
		wantCut   bool
		wantBin   bool
		checkBody func(t *testing.T, body string)
	}{
		{name: "fits", body: "short", wantBody: "short"},
		{name: "exactly the limit", body: "0123456789", maxBytes: 10, wantBody: "0123456789"},
		{name: "beyond the limit", body: "0123456789x", maxBytes: 10, wantBody: "0123456789", wantCut: true},
		{name: "rune cut at the limit", body: "ééé", maxBytes: 5, wantBody: "éé", wantCut: true},
		{name: "binary", body: "\x00\x01\x02", wantBin: true},
		{name: "invalid utf8", body: "a\xffb", wantBin: true},
		{name: "oversized", body: big, wantCut: true, checkBody: func(t *testing.T, body string) {
			assert.Greater(t, len(body), 3000, "fills most of the result")
			assert.True(t, strings.HasPrefix(big, body))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newTestServer(t, func(w http.ResponseWriter, _ *http.Request) {
				_, _ = w.Write([]byte(tt.body))
			})
			reg := newTestRegistry(t, Config{AllowHosts: []string{srv.hostPort()}, HTTPMaxBytes: tt.maxBytes})
			res := getURL(t, reg, srv.URL)
			assert.LessOrEqual(t, len([]rune(res.Content())), toolcore.MaxContentCodePoints)
			var got httpResult
			requireOK(t, res, &got)
			assert.Equal(t, tt.wantCut, got.Truncated)
			assert.Equal(t, tt.wantBin, got.Binary)
			switch {
			case tt.wantBin:
				assert.Nil(t, got.Body)
			case tt.checkBody != nil:
				tt.checkBody(t, *got.Body)
			default:
				assert.Equal(t, tt.wantBody, *got.Body)
			}
		})
	}
}

// blockingServer holds every request until the test ends.
func blockingServer(t *testing.T, writeHeader bool) *testServer {
	release := make(chan struct{})
	srv := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
		if writeHeader {
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write([]byte("partial"))
			w.(http.Flusher).Flush()
		}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	t.Cleanup(func() { close(release) }) // runs before srv.Close
	return srv
}

func TestHTTPGetTimeout(t *testing.T) {
	for _, headers := range []bool{false, true} {
		t.Run(fmt.Sprintf("headers sent %v", headers), func(t *testing.T) {
			srv := blockingServer(t, headers)
			reg := newTestRegistry(t, Config{AllowHosts: []string{srv.hostPort()}, HTTPTimeout: 50 * time.Millisecond})
			msg := requireError(t, getURL(t, reg, srv.URL), toolcore.CodeToolExecutionFailed)
			assert.Equal(t, fmt.Sprintf("GET %q: timed out after 50ms", srv.URL), msg)
		})
	}
}

func TestHTTPGetCancellation(t *testing.T) {
	srv := blockingServer(t, false)
	reg := newTestRegistry(t, Config{AllowHosts: []string{srv.hostPort()}})
	ctx, cancel := context.WithCancelCause(context.Background())
	call, err := toolcore.NewToolCall("call-get", NameHTTPGet, []byte(fmt.Sprintf(`{"url":%q}`, srv.URL)))
	require.NoError(t, err)
	errc := make(chan error, 1)
	go func() {
		_, err := toolcore.Execute(ctx, reg, call)
		errc <- err
	}()
	require.Eventually(t, func() bool { return srv.hits.Load() == 1 }, 10*time.Second, time.Millisecond)
	stop := errors.New("agent stopped")
	cancel(stop)
	assert.ErrorIs(t, <-errc, stop)
}

func TestHTTPGetErrorsTransience(t *testing.T) {
	srv := blockingServer(t, false)
	s, err := Config{AllowHosts: []string{srv.hostPort()}, HTTPTimeout: 50 * time.Millisecond}.settings()
	require.NoError(t, err)
	h := newHTTPGetter(s)
	_, err = h.get(context.Background(), httpGetArgs{URL: srv.URL})
	require.Error(t, err)
	assert.True(t, toolcore.IsTransient(err), "timeouts may be retried")
	_, err = h.get(context.Background(), httpGetArgs{URL: "http://10.0.0.1/"})
	require.Error(t, err)
	assert.False(t, toolcore.IsTransient(err), "refusals are final")
}

func TestHTTPGetLongHeaderIsShortened(t *testing.T) {
	long := strings.Repeat("x", 2000)
	srv := newTestServer(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; "+long)
		_, _ = w.Write([]byte("body"))
	})
	reg := newTestRegistry(t, Config{AllowHosts: []string{srv.hostPort()}})
	var got httpResult
	requireOK(t, getURL(t, reg, srv.URL), &got)
	ct := []rune(got.Headers["content-type"])
	assert.Len(t, ct, maxShownChars)
	assert.Equal(t, '…', ct[len(ct)-1])
	assert.Equal(t, "body", *got.Body)
}

// A gzip body that inflates beyond HTTPMaxBytes is cut; when it is binary, the result still says
// so.
func TestHTTPGetBinaryCutSaysTruncated(t *testing.T) {
	var zipped bytes.Buffer
	zw := gzip.NewWriter(&zipped)
	_, err := zw.Write(make([]byte, 4<<20)) // 4 MiB of NUL bytes, a few KiB compressed
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	srv := newTestServer(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		w.Header().Set("Content-Type", "application/octet-stream")
		_, _ = w.Write(zipped.Bytes())
	})
	reg := newTestRegistry(t, Config{AllowHosts: []string{srv.hostPort()}})

	var got httpResult
	requireOK(t, getURL(t, reg, srv.URL), &got)

	assert.True(t, got.Binary)
	assert.True(t, got.Truncated, "only HTTPMaxBytes of the inflated body were read")
	assert.Nil(t, got.Body)
}

// The model learns that a name does not resolve to a public address, not which address or what
// kind: that would make http_get a DNS oracle for internal names. The operator's log has both.
func TestHTTPGetRefusalHidesTheResolvedAddress(t *testing.T) {
	core, logs := observer.New(zapcore.InfoLevel)
	reg := newTestRegistry(t, Config{
		Resolver: fakeResolver{"db.corp.test": {netip.MustParseAddr("10.20.30.40")}},
		Logger:   zap.New(core),
	})

	msg := requireError(t, getURL(t, reg, "http://db.corp.test/"), toolcore.CodeToolExecutionFailed)

	assert.NotContains(t, msg, "10.20.30.40")
	assert.NotContains(t, msg, "private")
	assert.Contains(t, msg, `refused host "db.corp.test": it does not resolve to a public address`)
	require.Equal(t, 1, logs.Len(), "the operator sees the refusal")
	fields := logs.All()[0].ContextMap()
	assert.Equal(t, "10.20.30.40", fields["address"])
	assert.Equal(t, "db.corp.test", fields["host"])
	assert.Equal(t, "a private address", fields["reason"])
}

func TestHTTPGetRetryAfter(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name          string
		status        int
		retryAfter    string
		wantErr       bool
		wantTransient bool
		wantDelay     time.Duration // 0: no RetryAfter delay (the backoff)
	}{
		{name: "429 with seconds", status: 429, retryAfter: "2", wantErr: true, wantTransient: true, wantDelay: 2 * time.Second},
		{name: "503 with seconds", status: 503, retryAfter: "30", wantErr: true, wantTransient: true, wantDelay: 30 * time.Second},
		{name: "429 with an HTTP date", status: 429, retryAfter: "Wed, 02 Dec 2026 12:01:30 GMT", wantErr: true, wantTransient: true, wantDelay: 90 * time.Second},
		{name: "a long wait is cut to the bound", status: 429, retryAfter: "86400", wantErr: true, wantTransient: true, wantDelay: toolcore.MaxRetryAfter},
		{name: "an absurd number is cut to the bound", status: 429, retryAfter: "99999999999999999999999", wantErr: true, wantTransient: true, wantDelay: toolcore.MaxRetryAfter},
		{name: "a date in the past is the backoff", status: 429, retryAfter: "Wed, 02 Dec 2026 11:00:00 GMT", wantErr: true, wantTransient: true},
		{name: "zero is the backoff", status: 503, retryAfter: "0", wantErr: true, wantTransient: true},
		{name: "malformed is the backoff", status: 429, retryAfter: "soon", wantErr: true, wantTransient: true},
		{name: "negative is the backoff", status: 429, retryAfter: "-5", wantErr: true, wantTransient: true},
		{name: "429 without the header is a result", status: 429},
		{name: "other statuses are results", status: 500, retryAfter: "2"},
		{name: "ok is a result", status: 200, retryAfter: "2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := &http.Response{StatusCode: tt.status, Status: fmt.Sprintf("%d %s", tt.status, http.StatusText(tt.status)), Header: http.Header{}}
			if tt.retryAfter != "" {
				resp.Header.Set("Retry-After", tt.retryAfter)
			}
			err := retryLater("https://api.example/x", resp, now)
			if !tt.wantErr {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), "the server asks to retry after")
			assert.Equal(t, tt.wantTransient, toolcore.IsTransient(err))
			delay, _ := toolcore.RetryDelay(err)
			assert.Equal(t, tt.wantDelay, delay)
		})
	}
}

// A 429 with Retry-After from a real server ends the in-process call (no retries there) with
// the server's words; the durable path retries it after the delay (e2e.TestRetryAfter).
func TestHTTPGetTooManyRequestsIsAnExecutionFailure(t *testing.T) {
	srv := newTestServer(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Retry-After", "2")
		http.Error(w, "slow down", http.StatusTooManyRequests)
	})
	reg := newTestRegistry(t, Config{AllowHosts: []string{srv.hostPort()}})
	got := getURL(t, reg, srv.URL)
	assert.True(t, got.IsError())
	assert.Contains(t, got.Content(), "TOOL_EXECUTION_FAILED")
	assert.Contains(t, got.Content(), "429 Too Many Requests; the server asks to retry after 2")
}
