package e2e

import (
	"context"
	"encoding/base64"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/callbacks"
	"github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/internal/devtest"
	"github.com/toolgate/toolgate/secrets"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/worker"
)

// callbackKey is the tests' signing key (a secret of the worker's source in production).
const callbackKey = "e2e-callback-signing-key-0123456789abcdef"

// callbackEnv is a callback endpoint served on loopback and a worker whose tools mint its URLs.
type callbackEnv struct {
	t        testing.TB
	queue    string
	endpoint *callbacks.Endpoint
	client   *client.Client
	tools    []toolcore.Tool
}

// newCallbackEnv serves an endpoint allowing perMinute requests a minute from one address (0:
// the default) for a worker of tools.
func newCallbackEnv(t testing.TB, perMinute int, tools ...toolcore.Tool) *callbackEnv {
	t.Helper()
	sdk := devtest.Client(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ep, err := callbacks.New(t.Context(), callbacks.Options{
		URL:    "http://" + ln.Addr().String() + "/callback",
		Keys:   secrets.Map{callbacks.DefaultKeyName: callbackKey},
		Client: sdk,

		RequestsPerMinute: perMinute,
	})
	require.NoError(t, err)
	mux := http.NewServeMux()
	mux.Handle(ep.Path()+"/", ep)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	e := &callbackEnv{t: t, queue: devtest.TaskQueue(t), endpoint: ep, tools: tools}
	e.client = client.New(sdk, client.Options{TaskQueue: e.queue, Scope: e.queue, Namespace: devtest.Server(t).Namespace()})
	return e
}

// startWorker starts a worker of the env's tools with the endpoint's callbacks.
func (e *callbackEnv) startWorker() *worker.Worker {
	e.t.Helper()
	reg, err := toolcore.NewRegistry(e.tools...)
	require.NoError(e.t, err)
	w, err := worker.New(devtest.Client(e.t), devtest.Server(e.t).Namespace(), reg, worker.Options{
		TaskQueue: e.queue, StopTimeout: 5 * time.Second, Callbacks: e.endpoint,
	})
	require.NoError(e.t, err)
	require.NoError(e.t, w.Start())
	e.t.Cleanup(w.Stop)
	return w
}

// provider is a fake external system (a payment provider): the tool registers its callback URLs
// with it, and the test makes it call back.
type provider struct{ urls chan string }

func newProvider() *provider { return &provider{urls: make(chan string, 8)} }

// register is the tool's hand: the provider takes the URL.
func (p *provider) register(url string) error {
	p.urls <- url
	return nil
}

// next is the next URL the provider was given.
func (p *provider) next(t testing.TB) string {
	t.Helper()
	select {
	case u := <-p.urls:
		return u
	case <-time.After(testTimeout):
		t.Fatal("the tool registered no callback URL")
		return ""
	}
}

// callBack POSTs body to u as the provider does and returns the status and answer.
func callBack(t testing.TB, u, contentType, body string) (int, string) {
	t.Helper()
	status, text, err := post(t.Context(), u, contentType, body)
	require.NoError(t, err)
	return status, text
}

// post is callBack for any goroutine.
func post(ctx context.Context, u, contentType, body string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Content-Type", contentType)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return resp.StatusCode, string(b), err
}

// tampered is u with one bit of its opaque segment flipped.
func tampered(t *testing.T, u string) string {
	t.Helper()
	i := strings.LastIndexByte(u, '/')
	raw, err := base64.RawURLEncoding.DecodeString(u[i+1:])
	require.NoError(t, err)
	raw[len(raw)/2] ^= 1
	return u[:i+1] + base64.RawURLEncoding.EncodeToString(raw)
}

// paymentTool asks two callbacks in one round ("charge" and "refund-window") and returns what
// arrived at each.
func paymentTool(t *testing.T, p *provider, runs *atomic.Int32, timeout time.Duration) toolcore.Tool {
	return define(t, "pay", toolcore.Options{SideEffect: toolcore.Unsafe, InputTimeout: timeout}, func(ctx context.Context, _ args) (any, error) {
		runs.Add(1)
		charge, errCharge := toolcore.Callback(ctx, "charge", p.register)
		window, errWindow := toolcore.Callback(ctx, "refund-window", p.register)
		if err := errors.Join(errCharge, errWindow); err != nil {
			return nil, err
		}
		return map[string]string{
			"charge": charge.ContentType + " " + string(charge.Body),
			"window": window.ContentType + " " + string(window.Body),
		}, nil
	})
}

// A callback tool completes on the real callbacks, with their bodies and content types in its
// result (issue 34 item 4): a forged (tampered) URL is refused 410 without reaching the call, a
// second request to an answered URL is refused 409 by the call, the wait survives its worker's
// restart, and a request after the call ended is refused 410. The tool ran twice: once asking,
// once with the answers.
func TestCallbackToolCompletesOnTheRealCallback(t *testing.T) {
	p := newProvider()
	var runs atomic.Int32
	e := newCallbackEnv(t, 0, paymentTool(t, p, &runs, 10*time.Minute))
	w := e.startWorker()
	done := goExecute(t.Context(), e.client, call(t, "pay-1", "pay", `{}`))
	charge, window := p.next(t), p.next(t) // in the order the tool asked

	status, text := callBack(t, tampered(t, charge), "application/json", `{"forged":true}`)
	assert.Equal(t, http.StatusGone, status, text)
	assert.NotContains(t, text, "forged", "the body is never echoed")

	status, text = callBack(t, charge, "application/json", `{"status":"paid"}`)
	require.Equal(t, http.StatusOK, status, text)
	status, text = callBack(t, charge, "application/json", `{"status":"paid twice"}`)
	assert.Equal(t, http.StatusConflict, status, "a second callback to an answered URL: %s", text)

	// The call waits for the other callback with no worker; another worker takes it on.
	w.Stop()
	e.startWorker()
	status, text = callBack(t, window, "text/plain; charset=utf-8", "open until friday")
	require.Equal(t, http.StatusOK, status, text)

	out := await(t, done)
	require.NoError(t, out.err)
	assert.False(t, out.result.IsError(), out.result.Content())
	assert.Contains(t, out.result.Content(), `application/json {\"status\":\"paid\"}`)
	assert.Contains(t, out.result.Content(), "text/plain; charset=utf-8 open until friday")
	assert.NotContains(t, out.result.Content(), "paid twice")
	assert.Equal(t, int32(2), runs.Load(), "asked once, ran once with the answers")

	status, text = callBack(t, window, "text/plain", "late")
	assert.Equal(t, http.StatusGone, status, "a callback after the call ended: %s", text)
}

// A callback that comes after the tool's InputTimeout is refused 410, and the call has ended
// TOOL_EXECUTION_FAILED, linked, naming the questions nobody answered; the tool ran once.
func TestLateCallbackRefusedAfterTimeout(t *testing.T) {
	p := newProvider()
	var runs atomic.Int32
	e := newCallbackEnv(t, 0, paymentTool(t, p, &runs, time.Second))
	e.startWorker()
	out := await(t, goExecute(t.Context(), e.client, call(t, "pay-late", "pay", `{}`)))
	require.NoError(t, out.err)
	require.True(t, out.result.IsError(), out.result.Content())
	assert.Equal(t, "pay-late", out.result.ToolCallID())
	assert.Equal(t, toolcore.CodeToolExecutionFailed, out.result.ErrorCode())
	assert.Contains(t, out.result.ErrorMessage(), "charge")
	assert.Equal(t, int32(1), runs.Load())

	status, text := callBack(t, p.next(t), "application/json", `{"status":"paid"}`)
	assert.Equal(t, http.StatusGone, status, text)
}

// Callbacks to one URL racing each other (a provider's retries, a replay) are answered 200 once:
// the others are refused 409 by the call, or 410 once it has ended, and the tool sees the one
// that was taken.
func TestConcurrentCallbacksAnswerOnce(t *testing.T) {
	p := newProvider()
	var runs atomic.Int32
	tool := define(t, "hook", toolcore.Options{SideEffect: toolcore.Idempotent}, func(ctx context.Context, _ args) (any, error) {
		runs.Add(1)
		got, err := toolcore.Callback(ctx, "done", p.register)
		if err != nil {
			return nil, err
		}
		return string(got.Body), nil
	})
	e := newCallbackEnv(t, 0, tool)
	e.startWorker()
	done := goExecute(t.Context(), e.client, call(t, "hook-1", "hook", `{}`))
	u := p.next(t)
	const senders = 5
	type answer struct {
		status     int
		body, text string
	}
	answers := make(chan answer, senders)
	for i := range senders {
		go func() {
			body := "delivery-" + strconv.Itoa(i)
			status, text, err := post(t.Context(), u, "text/plain", body)
			if err != nil {
				text = err.Error()
			}
			answers <- answer{status, body, text}
		}()
	}
	var taken []string
	for range senders {
		a := <-answers
		switch a.status {
		case http.StatusOK:
			taken = append(taken, a.body)
		case http.StatusConflict, http.StatusGone:
		default:
			t.Errorf("a racing callback got %d: %s", a.status, a.text)
		}
	}
	require.Len(t, taken, 1, "exactly one callback is taken")
	out := await(t, done)
	require.NoError(t, out.err)
	assert.Contains(t, out.result.Content(), taken[0])
	assert.Equal(t, int32(2), runs.Load())
}

// BenchmarkCallbackRoundTrip is a callback tool's whole call on the embedded server: the first
// attempt mints the URL and asks, the call waits, the provider POSTs to the endpoint, the update
// is accepted, the second attempt returns what arrived and the result is linked. "callback"
// POSTs once the call waits (a webhook that comes later) and reports the POST-to-result time as
// ms/delivered; "at-once" POSTs as soon as the tool hands the URL out (the endpoint holds it
// until the call waits); "plain" is a tool answering at once, for the ratio.
func BenchmarkCallbackRoundTrip(b *testing.B) {
	p := newProvider()
	webhook := toolcore.MustDefine(toolcore.Definition[args]{
		Name: "webhook", Description: "waits for one callback", Validate: decodeArgs,
		Options: toolcore.Options{SideEffect: toolcore.Idempotent},
		Execute: func(ctx context.Context, _ args) (any, error) {
			got, err := toolcore.Callback(ctx, "done", p.register)
			if err != nil {
				return nil, err
			}
			return string(got.Body), nil
		},
	})
	plain := toolcore.MustDefine(toolcore.Definition[args]{
		Name: "plain", Description: "answers at once", Validate: decodeArgs,
		Options: toolcore.Options{SideEffect: toolcore.Idempotent},
		Execute: func(context.Context, args) (any, error) { return "done", nil },
	})
	e := newCallbackEnv(b, 1<<20, webhook, plain)
	e.startWorker()
	var n atomic.Int64
	roundTrip := func(b *testing.B, waitFirst bool) time.Duration {
		id := "cb-" + strconv.FormatInt(n.Add(1), 10)
		tc, err := toolcore.NewToolCall(id, "webhook", []byte(`{}`))
		require.NoError(b, err)
		done := goExecute(b.Context(), e.client, tc)
		u := p.next(b)
		for waitFirst {
			st, err := e.client.Input(b.Context(), id)
			if err == nil && st.Waiting {
				break
			}
		}
		posted := time.Now()
		status, text := callBack(b, u, "application/json", `{"status":"done"}`)
		require.Equal(b, http.StatusOK, status, text)
		out := <-done
		require.NoError(b, out.err)
		require.False(b, out.result.IsError(), out.result.Content())
		return time.Since(posted)
	}
	b.Run("callback", func(b *testing.B) {
		var delivered time.Duration
		for b.Loop() {
			delivered += roundTrip(b, true)
		}
		b.ReportMetric(float64(delivered.Milliseconds())/float64(b.N), "ms/delivered")
	})
	b.Run("at-once", func(b *testing.B) {
		for b.Loop() {
			roundTrip(b, false)
		}
	})
	b.Run("plain", func(b *testing.B) {
		for b.Loop() {
			id := "plain-" + strconv.FormatInt(n.Add(1), 10)
			tc, err := toolcore.NewToolCall(id, "plain", []byte(`{}`))
			require.NoError(b, err)
			_, err = e.client.Execute(b.Context(), tc)
			require.NoError(b, err)
		}
	})
}
