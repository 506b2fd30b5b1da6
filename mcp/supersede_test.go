package mcp

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A resumption supersedes the request holding its stream only when it is the same principal's
// (issuer and subject) in the same session: another subject's is refused by go-sdk (403), and one
// of the same subject under another issuer gets go-sdk's 409, the holding request untouched. The
// owner's resumption, while the call still runs, ends the holding request cleanly (its response
// ends, unfinished, with no error) and is answered 200; the call goes on and its result arrives
// on the resumption. Every entry is released once the requests have ended.
func TestStreamResumeSupersedesOnlyItsPrincipal(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	server := sdk.NewServer(&sdk.Implementation{Name: "supersede", Version: "1"}, nil)
	sdk.AddTool(server, &sdk.Tool{Name: "hold", Description: "Wait until the test releases it."},
		func(ctx context.Context, _ *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			close(started)
			select {
			case <-release:
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "released"}}}, nil, nil
			case <-ctx.Done():
				return nil, nil, context.Cause(ctx)
			}
		})
	holders := newStreamHolders(sdk.NewMemoryEventStore(nil))
	stateful := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return server },
		&sdk.StreamableHTTPOptions{EventStore: holders})
	verify := func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		iss, sub, ok := strings.Cut(token, ".")
		if !ok {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{UserID: sub, Expiration: time.Now().Add(time.Hour), Extra: map[string]any{"iss": iss}}, nil
	}
	ts := httptest.NewServer(auth.RequireBearerToken(verify, nil)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		holders.serve(stateful, w, r)
	})))
	closed := false
	t.Cleanup(func() {
		if !closed {
			ts.Close()
		}
	})

	post := func(token, session, body string) *http.Response {
		return rawRequest(t, ts.URL, http.MethodPost, token, session, body)
	}
	resp := post("a.alice", "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	_, _ = io.Copy(io.Discard, resp.Body)
	require.NoError(t, resp.Body.Close())
	session := resp.Header.Get("Mcp-Session-Id")
	require.NotEmpty(t, session)
	resp = post("a.alice", session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	require.NoError(t, resp.Body.Close())

	call := post("a.alice", session, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"hold","arguments":{}}}`)
	defer call.Body.Close()
	require.Equal(t, http.StatusOK, call.StatusCode)
	callEvents := bufio.NewReader(call.Body)
	prime, err := ReadSSEEvent(callEvents)
	require.NoError(t, err)
	require.NotEmpty(t, prime.ID, "the priming event names the stream")
	<-started
	require.Equal(t, 1, holders.holding(), "the call's request holds its stream")
	stream, _, _ := strings.Cut(prime.ID, "_")
	holder := holders.holderOf(streamKey{session, stream})
	require.NotNil(t, holder)

	for _, other := range []struct {
		token, why string
		status     int
	}{
		{"a.bob", "another subject", http.StatusForbidden},
		{"b.alice", "the same subject under another issuer", http.StatusConflict},
	} {
		resp := rawRequest(t, ts.URL, http.MethodGet, other.token, session, "", "Last-Event-ID", prime.ID)
		_, _ = io.Copy(io.Discard, resp.Body)
		require.NoError(t, resp.Body.Close())
		assert.Equal(t, other.status, resp.StatusCode, "%s cannot resume the stream", other.why)
		select {
		case <-holder.done:
			t.Fatalf("%s's resumption ended the holding request", other.why)
		default:
		}
		assert.Same(t, holder, holders.holderOf(streamKey{session, stream}), "%s holds nothing", other.why)
	}

	// go-sdk sends the resumption's headers with its first event: here the result, once released.
	answered, failed := make(chan *http.Response, 1), make(chan error, 1)
	req := newRawRequest(t, ts.URL, http.MethodGet, "a.alice", session, "", "Last-Event-ID", prime.ID)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			failed <- err
			return
		}
		answered <- resp
	}()
	_, err = ReadSSEEvent(callEvents)
	require.ErrorIs(t, err, io.EOF, "the superseded request's response ends cleanly, unfinished")
	<-holder.done
	close(release) // only now: the call still ran when it was superseded
	var resumed *http.Response
	select {
	case resumed = <-answered:
	case err := <-failed:
		t.Fatalf("the resumption: %v", err)
	}
	defer resumed.Body.Close()
	require.Equal(t, http.StatusOK, resumed.StatusCode, "the owner's resumption is served")
	events := bufio.NewReader(resumed.Body)
	for {
		e, err := ReadSSEEvent(events)
		require.NoError(t, err, "the resumption ended before the result")
		if strings.Contains(e.Data, `"id":2`) {
			assert.Contains(t, e.Data, "released", "the call went on and its result arrived on the resumption")
			break
		}
	}
	_, err = ReadSSEEvent(events)
	require.ErrorIs(t, err, io.EOF)

	ts.Close() // waits for every handler
	closed = true
	assert.Zero(t, holders.holding(), "no entry outlives its request")
}

// holderOf is the request holding key.
func (h *streamHolders) holderOf(key streamKey) *streamHolder {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.held[key]
}

func rawRequest(t *testing.T, url, method, token, session, body string, header ...string) *http.Response {
	t.Helper()
	resp, err := http.DefaultClient.Do(newRawRequest(t, url, method, token, session, body, header...))
	require.NoError(t, err)
	return resp
}

// newRawRequest is a request of a 2025-11-25 session (when session is set) with a bearer token.
func newRawRequest(t *testing.T, url, method, token, session, body string, header ...string) *http.Request {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return req
}
