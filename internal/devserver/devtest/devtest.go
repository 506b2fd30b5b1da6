package devtest

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.uber.org/zap"
	"google.golang.org/grpc"

	"github.com/toolgate/toolgate/internal/devserver"
	"github.com/toolgate/toolgate/worker"
)

// startTimeout bounds the server start in Main.
const startTimeout = time.Minute

// shared is the server of this test binary. Main sets it before m.Run and clears it after; tests
// only read it.
var shared atomic.Pointer[devserver.Server]

// queues numbers the task queues handed out by TaskQueue.
var queues atomic.Int64

// Main starts the shared server, runs the tests and stops the server. It returns the exit code
// for os.Exit: m.Run's, or 1 if the server did not start or stop cleanly. opts.Logger defaults
// to warnings and errors on stderr.
func Main(m *testing.M, opts devserver.Options) int {
	if opts.Logger == nil {
		opts.Logger = stderrLogger()
	}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	srv, err := devserver.Start(ctx, opts)
	cancel()
	if err != nil {
		fmt.Fprintf(os.Stderr, "devtest: %v\n", err)
		return 1
	}
	shared.Store(srv)
	code := m.Run()
	shared.Store(nil)
	if err := srv.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "devtest: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// Server returns the shared server. It fails the test if Main is not running the tests.
func Server(t testing.TB) *devserver.Server {
	t.Helper()
	srv := shared.Load()
	if srv == nil {
		t.Fatal("devtest: no server: call devtest.Main from TestMain")
	}
	return srv
}

// Client returns a new SDK client for the shared server's namespace, closed when the test ends.
// It carries worker.DialOption, as a worker's client should.
func Client(t testing.TB) client.Client {
	t.Helper()
	srv := Server(t)
	c, err := client.Dial(client.Options{
		HostPort:  srv.FrontendAddress(),
		Namespace: srv.Namespace(),
		Logger:    sdkLogger(),
		ConnectionOptions: client.ConnectionOptions{
			DialOptions: []grpc.DialOption{worker.DialOption()},
		},
	})
	if err != nil {
		t.Fatalf("devtest: dial %s: %v", srv.FrontendAddress(), err)
	}
	t.Cleanup(c.Close)
	return c
}

// TaskQueue returns a task queue name unique in this test binary, derived from the test's name.
func TaskQueue(t testing.TB) string {
	name := strings.NewReplacer("/", "-", " ", "_").Replace(t.Name())
	return fmt.Sprintf("%s-%d", name, queues.Add(1))
}

// stderrLogger writes warnings and errors to stderr.
func stderrLogger() *zap.Logger {
	cfg := zap.NewDevelopmentConfig()
	cfg.Level = zap.NewAtomicLevelAt(zap.WarnLevel)
	cfg.DisableStacktrace = true
	logger, err := cfg.Build()
	if err != nil {
		return zap.NewNop()
	}
	return logger
}

// sdkLogger writes the SDK's warnings and errors to stderr. Not the test log: workers log after
// a test ends, and t.Log then panics.
func sdkLogger() sdklog.Logger {
	return sdklog.NewStructuredLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
}
