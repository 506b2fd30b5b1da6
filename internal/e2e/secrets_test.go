package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdkclient "go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/internal/devtest"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/worker"
)

// leakKey is the API key of the leak test: the worker's secret source has it, nothing else.
const leakKey = "sk-test-Zq8rT4mW1xV7yK2pL9nB3c"

// keySource is the worker's secret source of the leak test.
type keySource struct{}

func (keySource) Secret(_ context.Context, name string) (string, error) {
	if name == "api_key" {
		return leakKey, nil
	}
	return "", fmt.Errorf("%s: %w", name, toolcore.ErrSecretNotFound)
}

// closedURL returns an http URL on a loopback port nothing listens on.
func closedURL(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return "http://" + addr
}

// syncBuffer is a log sink the worker's goroutines write while the test reads.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) Sync() error { return nil }

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// tagRecorder is an SDK metrics handler that keeps every tag the worker and client emit.
type tagRecorder struct {
	mu   *sync.Mutex
	tags map[string]bool // "name=value"
}

func (r tagRecorder) WithTags(tags map[string]string) sdkclient.MetricsHandler {
	r.mu.Lock()
	defer r.mu.Unlock()
	for k, v := range tags {
		r.tags[k+"="+v] = true
	}
	return r
}

func (tagRecorder) Counter(string) sdkclient.MetricsCounter {
	return sdkclient.MetricsNopHandler.Counter("")
}

func (tagRecorder) Gauge(string) sdkclient.MetricsGauge { return sdkclient.MetricsNopHandler.Gauge("") }

func (tagRecorder) Timer(string) sdkclient.MetricsTimer { return sdkclient.MetricsNopHandler.Timer("") }

func (r tagRecorder) all() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b bytes.Buffer
	for t := range r.tags {
		b.WriteString(t + "\n")
	}
	return b.String()
}

// The leak of issue 33: a tool reads its API key from the worker's secret source and calls an
// API with the key in the URL; net/http fails, and its error, with the URL, is what the tool
// returns (a final error, a transient error retried, a fatal error), reports as progress,
// checkpoints and panics with. The key appears in no history event (nor its URL-escaped or base64
// forms), no search attribute or memo, no log line of the worker (toolgate's and the SDK's, at
// debug) and no metric tag; the redaction marker is where it was.
func TestSecretNeverLeaksIntoHistoryLogsOrMetrics(t *testing.T) {
	target := closedURL(t) + "/v1/data?key="
	get := func(ctx context.Context) error {
		key, err := toolcore.Secret(ctx, "api_key")
		if err != nil {
			return err
		}
		toolcore.ReportProgress(ctx, toolcore.Progress{Completed: 1, Message: "GET " + target + key})
		_ = toolcore.Checkpoint(ctx, map[string]string{"url": target + key})
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, target+url.QueryEscape(key), nil)
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			_ = resp.Body.Close()
			return errors.New("the closed port answered")
		}
		return err
	}
	secretOpts := func(o toolcore.Options) toolcore.Options { o.Secrets = []string{"api_key"}; return o }
	tools := []toolcore.Tool{
		define(t, "leak_result", secretOpts(toolcore.Options{}), func(ctx context.Context, _ args) (any, error) {
			return nil, get(ctx)
		}),
		define(t, "leak_retried", secretOpts(toolcore.Options{SideEffect: toolcore.Idempotent, MaxAttempts: 2}), func(ctx context.Context, _ args) (any, error) {
			return nil, toolcore.Transient(get(ctx))
		}),
		define(t, "leak_fatal", secretOpts(toolcore.Options{}), func(ctx context.Context, _ args) (any, error) {
			return nil, toolcore.WrapNonRecoverable(get(ctx), "cannot reach the API")
		}),
		define(t, "leak_panic", secretOpts(toolcore.Options{}), func(ctx context.Context, _ args) (any, error) {
			panic(get(ctx).Error())
		}),
		define(t, "leak_output", secretOpts(toolcore.Options{}), func(ctx context.Context, _ args) (any, error) {
			key, _ := toolcore.Secret(ctx, "api_key")
			return map[string]string{"echo": key, "basic": base64.StdEncoding.EncodeToString([]byte(key))}, nil
		}),
	}

	var logs syncBuffer
	metrics := tagRecorder{mu: &sync.Mutex{}, tags: map[string]bool{}}
	srv := devtest.Server(t)
	sdk, err := sdkclient.Dial(sdkclient.Options{
		HostPort:       srv.FrontendAddress(),
		Namespace:      srv.Namespace(),
		Logger:         sdklog.NewStructuredLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))),
		MetricsHandler: metrics,
		ConnectionOptions: sdkclient.ConnectionOptions{
			DialOptions: []grpc.DialOption{worker.DialOption()},
		},
	})
	require.NoError(t, err)
	t.Cleanup(sdk.Close)
	queue := devtest.TaskQueue(t)
	reg, err := toolcore.NewRegistry(tools...)
	require.NoError(t, err)
	w, err := worker.New(sdk, srv.Namespace(), reg, worker.Options{
		TaskQueue: queue,
		Secrets:   keySource{},
		Logger:    zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), &logs, zapcore.DebugLevel)),
	})
	require.NoError(t, err)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	c := client.New(sdk, client.Options{TaskQueue: queue, Scope: queue, Namespace: srv.Namespace()})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	var histories bytes.Buffer
	for _, tool := range tools {
		id := "leak-" + tool.Name()
		res, err := c.Execute(ctx, call(t, id, tool.Name(), `{}`))
		if tool.Name() == "leak_fatal" {
			require.Error(t, err)
			assert.NotContains(t, err.Error(), leakKey)
		} else {
			require.NoError(t, err, tool.Name())
			assert.NotContains(t, res.Content(), leakKey)
			assert.Contains(t, res.Content(), "[REDACTED:api_key]", tool.Name())
		}
		hist, err := c.History(ctx, c.WorkflowID(id), "")
		require.NoError(t, err)
		data, err := proto.Marshal(hist) // binary: payloads as their raw bytes
		require.NoError(t, err)
		histories.Write(data)
		desc, err := sdk.DescribeWorkflowExecution(ctx, c.WorkflowID(id), "")
		require.NoError(t, err)
		data, err = proto.Marshal(desc)
		require.NoError(t, err)
		histories.Write(data)
	}
	w.Stop() // flush the worker's last lines

	forms := map[string]string{
		"raw":       leakKey,
		"query":     url.QueryEscape(leakKey),
		"base64":    base64.StdEncoding.EncodeToString([]byte(leakKey)),
		"base64raw": base64.RawStdEncoding.EncodeToString([]byte(leakKey)),
		"prefix":    leakKey[:12],
	}
	for name, form := range forms {
		// Not assert.NotContains: its message would print the whole history.
		assert.Falsef(t, strings.Contains(histories.String(), form), "history holds the key (%s)", name)
		assert.Falsef(t, strings.Contains(logs.String(), form), "the worker's log holds the key (%s)", name)
		assert.Falsef(t, strings.Contains(metrics.all(), form), "a metric tag holds the key (%s)", name)
	}
	assert.True(t, strings.Contains(histories.String(), "[REDACTED:api_key]"), "the marker is where the key was")
	assert.True(t, strings.Contains(histories.String(), "connection refused"), "the error itself is kept")
}
