package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/mcp"
)

// wireLog records, in the order the client reads them off its connection, the progress
// notifications ("progress <completed>/<total>") and the responses ("response") it receives.
type wireLog struct {
	sdk.Transport
	mu     sync.Mutex
	events []string
}

func (l *wireLog) Connect(ctx context.Context) (sdk.Connection, error) {
	conn, err := l.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &wireLogConn{Connection: conn, log: l}, nil
}

func (l *wireLog) snapshot() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.events...)
}

type wireLogConn struct {
	sdk.Connection
	log *wireLog
}

func (c *wireLogConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if err != nil {
		return msg, err
	}
	event := ""
	switch m := msg.(type) {
	case *jsonrpc.Request:
		if m.Method == "notifications/progress" {
			var p sdk.ProgressNotificationParams
			if json.Unmarshal(m.Params, &p) == nil {
				event = fmt.Sprintf("progress %v/%v", p.Progress, p.Total)
			}
		}
	case *jsonrpc.Response:
		event = "response"
	}
	if event != "" {
		c.log.mu.Lock()
		c.log.events = append(c.log.events, event)
		c.log.mu.Unlock()
	}
	return msg, nil
}

// connectLogged connects a client whose progress notifications go to the returned channel and
// whose incoming messages are logged in wire order.
func connectLogged(t *testing.T, f *fixture) (*sdk.ClientSession, <-chan *sdk.ProgressNotificationParams, *wireLog) {
	return connectLoggedTo(t, f.server())
}

// connectLoggedTo is connectLogged to server s.
func connectLoggedTo(t *testing.T, s *sdk.Server) (*sdk.ClientSession, <-chan *sdk.ProgressNotificationParams, *wireLog) {
	progress := make(chan *sdk.ProgressNotificationParams, 256)
	c := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, &sdk.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
			progress <- req.Params
		},
	})
	serverT, clientT := sdk.NewInMemoryTransports()
	ss, err := s.Connect(t.Context(), serverT, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ss.Close() })
	log := &wireLog{Transport: clientT}
	cs, err := c.Connect(t.Context(), log, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })
	return cs, progress, log
}

// Every progress report reaches the MCP client once and in order, the one the tool makes just
// before returning included, and all of them before the result (issue 23).
func TestProgressEveryReportOnceAndLastBeforeResult(t *testing.T) {
	f := newFixture(t)
	cs, progress, log := connectLogged(t, f)
	before := len(log.snapshot())

	type outcome struct {
		res *sdk.CallToolResult
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		params := &sdk.CallToolParams{Name: "steps", Arguments: map[string]any{}}
		params.SetProgressToken("steps-1")
		res, err := cs.CallTool(t.Context(), params)
		done <- outcome{res, err}
	}()
	// The tool goes on after each of its first three reports only once the client has it.
	for k := range 3 {
		for p := range progress {
			require.Equal(t, "steps-1", p.ProgressToken)
			require.LessOrEqual(t, p.Progress, float64(k), "no report skipped ahead")
			if p.Progress == float64(k) {
				assert.Equal(t, fmt.Sprintf("step %d", k), p.Message)
				break
			}
		}
		select {
		case f.tools.stepAck <- struct{}{}:
		case <-t.Context().Done():
			t.Fatal("the tool never waited for step", k)
		}
	}
	out := <-done
	require.NoError(t, out.err)
	assert.JSONEq(t, `{"steps":3}`, text(t, out.res))
	assert.Equal(t, []string{"progress 0/3", "progress 1/3", "progress 2/3", "progress 3/3", "response"},
		log.snapshot()[before:], "each report once, in order, the last one before the result")

	// A burst of 100 reports in a tight loop (well within 50 ms), then the result: every report
	// arrives, once, in order, the last one before the result (the heartbeat and the result
	// carry the progress window, wire.ProgressWindow).
	before = len(log.snapshot())
	params := &sdk.CallToolParams{Name: "burst", Arguments: map[string]any{}}
	params.SetProgressToken("burst-1")
	res, err := cs.CallTool(t.Context(), params)
	require.NoError(t, err)
	assert.JSONEq(t, `{"reports":100}`, text(t, res))
	want := make([]string, 0, 101)
	for k := 1; k <= 100; k++ {
		want = append(want, fmt.Sprintf("progress %d/100", k))
	}
	assert.Equal(t, append(want, "response"), log.snapshot()[before:], "all 100 reports, in order, each once, then the result")
}

// A mounted tool whose remote reports three times in a row just before its result (the
// conformance suite's tools-call-with-progress reports 0, 50 and 100 within about 100 ms) has
// all three reach toolgate mcp's client, in order, before the result.
func TestProgressOfAMountedToolAllArrive(t *testing.T) {
	_, url := newRemoteServer(t)
	transport, err := mcp.Target(url)
	require.NoError(t, err)
	tg := mountedWorker(t, "go", transport)
	infos, err := tg.ListTools(t.Context())
	require.NoError(t, err)
	cs, _, log := connectLoggedTo(t, mcp.NewServer(tg, infos, mcp.Options{}))
	for i := range 3 {
		before := len(log.snapshot())
		params := &sdk.CallToolParams{Name: "go_finish", Arguments: map[string]any{}}
		params.SetProgressToken(fmt.Sprintf("finish-%d", i))
		res, err := cs.CallTool(t.Context(), params)
		require.NoError(t, err)
		assert.Equal(t, "finished", text(t, res))
		assert.Equal(t, []string{"progress 1/3", "progress 2/3", "progress 3/3", "response"}, log.snapshot()[before:], "call %d", i)
	}
}
