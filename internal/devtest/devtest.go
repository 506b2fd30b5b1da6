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
	"google.golang.org/grpc"

	"github.com/toolgate/toolgate/internal/testbin"
	"github.com/toolgate/toolgate/worker"
)

// startTimeout bounds the server start in Main (a first `go build` of toolgate is separate).
const startTimeout = 2 * time.Minute

// stopTimeout bounds the server's stop after the tests.
const stopTimeout = 30 * time.Second

// SharedServer is the Temporal server of a test binary: a `toolgate dev` process, in memory, without the Web UI.
type SharedServer struct{ dev *testbin.Dev }

// FrontendAddress is the frontend's host:port.
func (s *SharedServer) FrontendAddress() string { return s.dev.Frontend() }

// Namespace is the namespace the tests use.
func (s *SharedServer) Namespace() string { return s.dev.Namespace() }

// shared is the server of this test binary. Main sets it before m.Run and clears it after; tests
// only read it.
var shared atomic.Pointer[SharedServer]

// queues numbers the task queues handed out by TaskQueue.
var queues atomic.Int64

// Main starts the shared server, runs the tests and stops the server. It returns the exit code
// for os.Exit: m.Run's, or 1 if the server did not start or stop cleanly.
func Main(m *testing.M) int {
	// toolgate dev builds once per run when $TOOLGATE_BIN is unset (see internal/testbin).
	if _, err := testbin.Toolgate(); err != nil {
		fmt.Fprintf(os.Stderr, "devtest: %v\n", err)
		return 1
	}
	defer testbin.Cleanup()
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	dev, err := testbin.StartDev(ctx, nil, "--in-memory", "--no-ui", "--port", "0", "--server-log-level", "warn")
	cancel()
	if err != nil {
		fmt.Fprintf(os.Stderr, "devtest: %v\n", err)
		return 1
	}
	shared.Store(&SharedServer{dev: dev})
	code := m.Run()
	shared.Store(nil)
	if err := dev.Stop(stopTimeout); err != nil {
		fmt.Fprintf(os.Stderr, "devtest: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	if code != 0 {
		fmt.Fprintf(os.Stderr, "devtest: toolgate dev stderr:\n%s\n", dev.StderrTail(8000))
	}
	return code
}

// Server returns the shared server. It fails the test if Main is not running the tests.
func Server(t testing.TB) *SharedServer {
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

// sdkLogger writes the SDK's warnings and errors to stderr. Not the test log: workers log after
// a test ends, and t.Log then panics.
func sdkLogger() sdklog.Logger {
	return sdklog.NewStructuredLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
}
