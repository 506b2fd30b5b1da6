package toolbox

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolgate/toolgate/toolcore"
)

// TestHTTPGetCarriesTraceparent: a request made under a span carries its W3C traceparent (the
// server's spans join the call's trace); one made without a span carries none.
func TestHTTPGetCarriesTraceparent(t *testing.T) {
	got := make(chan string, 2)
	srv := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Get("Traceparent")
		_, _ = w.Write([]byte("ok"))
	})
	reg := newTestRegistry(t, Config{AllowHosts: []string{srv.hostPort()}})
	sc := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID:    trace.TraceID{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36},
		SpanID:     trace.SpanID{0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7},
		TraceFlags: trace.FlagsSampled,
	})
	ctx := trace.ContextWithSpanContext(context.Background(), sc)
	requireOK(t, runCtx(t, ctx, reg, NameHTTPGet, `{"url":"`+srv.URL+`"}`, toolcore.ExecuteOptions{}), &httpResult{})
	assert.Equal(t, "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", <-got)
	requireOK(t, getURL(t, reg, srv.URL), &httpResult{})
	assert.Empty(t, <-got)
}
