package devserver

import (
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"go.temporal.io/server/common/config"
	sqliteplugin "go.temporal.io/server/common/persistence/sql/sqlplugin/sqlite"
	"go.temporal.io/server/schema/sqlite"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/toolgate/toolgate/internal/searchattr"
	"github.com/toolgate/toolgate/wire"
)

// testTimeout bounds every wait on a server in these tests. It is generous: under -race on a
// busy two-core machine one workflow can take seconds.
//
// The tests do not run in parallel: a few servers at once under -race starve each other.
const testTimeout = 2 * time.Minute

// greetWorkflow runs greetActivity and records the outcome search attribute, which wedges the
// workflow task if the namespace lacks it: a passing run proves the attribute is registered.
func greetWorkflow(ctx workflow.Context, name string) (string, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 10 * time.Second})
	var greeting string
	if err := workflow.ExecuteActivity(ctx, greetActivity, name).Get(ctx, &greeting); err != nil {
		return "", err
	}
	outcome := temporal.NewSearchAttributeKeyKeyword(wire.SearchAttributeToolOutcome).ValueSet("ok")
	if err := workflow.UpsertTypedSearchAttributes(ctx, outcome); err != nil {
		return "", err
	}
	return greeting, nil
}

func greetActivity(_ context.Context, name string) (string, error) {
	return "hello " + name, nil
}

// testLogger logs to t until the test's cleanup, then discards: goroutines the server library
// leaks may log after the test, and t.Log then panics.
func testLogger(t *testing.T) *zap.Logger {
	w := &gatedWriter{t: t}
	t.Cleanup(w.close)
	enc := zapcore.NewConsoleEncoder(zap.NewDevelopmentEncoderConfig())
	return zap.New(zapcore.NewCore(enc, zapcore.AddSync(w), zapcore.DebugLevel))
}

// gatedWriter writes to t.Log until closed.
type gatedWriter struct {
	mu     sync.Mutex
	t      *testing.T
	closed bool
}

func (w *gatedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.closed {
		w.t.Log(strings.TrimSuffix(string(p), "\n"))
	}
	return len(p), nil
}

func (w *gatedWriter) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
}

// start starts a server with a test logger and stops it at cleanup.
func start(t *testing.T, opts Options) *Server {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = testLogger(t)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	srv, err := Start(ctx, opts)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, srv.Stop()) })
	return srv
}

// dial returns a client for srv, closed at cleanup.
func dial(t testing.TB, srv *Server) client.Client {
	t.Helper()
	c, err := client.Dial(client.Options{
		HostPort:  srv.FrontendAddress(),
		Namespace: srv.Namespace(),
		Logger:    sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler)),
	})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	return c
}

// runGreet runs greetWorkflow with workflow ID id on a fresh worker and returns its result.
func runGreet(t *testing.T, c client.Client, id, name string) string {
	t.Helper()
	queue := "queue-" + id
	w := worker.New(c, queue, worker.Options{})
	w.RegisterWorkflow(greetWorkflow)
	w.RegisterActivity(greetActivity)
	require.NoError(t, w.Start())
	defer w.Stop()

	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:        id,
		TaskQueue: queue,
		TypedSearchAttributes: temporal.NewSearchAttributes(
			temporal.NewSearchAttributeKeyKeyword(wire.SearchAttributeToolName).ValueSet("greet"),
			temporal.NewSearchAttributeKeyKeyword(wire.SearchAttributeToolCallID).ValueSet(id),
		),
	}, greetWorkflow, name)
	require.NoError(t, err)
	var got string
	require.NoError(t, run.Get(ctx, &got))
	return got
}

// requireSearchAttributes asserts the namespace has the three Keyword attributes.
func requireSearchAttributes(t *testing.T, c client.Client, namespace string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	resp, err := c.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: namespace})
	require.NoError(t, err)
	for _, name := range searchattr.Names() {
		assert.Equal(t, enumspb.INDEXED_VALUE_TYPE_KEYWORD, resp.GetCustomAttributes()[name], name)
	}
}

func TestStartInMemory(t *testing.T) {
	srv := start(t, Options{})
	c := dial(t, srv)

	host, port, err := net.SplitHostPort(srv.FrontendAddress())
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.1", host)
	assert.NotEqual(t, "0", port)
	assert.Equal(t, "default", srv.Namespace())
	assert.Empty(t, srv.UIAddress())

	assert.Equal(t, "hello memory", runGreet(t, c, "greet-memory", "memory"))
	requireSearchAttributes(t, c, "default")
}

func TestStartCustomNamespace(t *testing.T) {
	srv := start(t, Options{Namespace: "tools", Retention: 48 * time.Hour})
	c := dial(t, srv)

	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	desc, err := c.WorkflowService().DescribeNamespace(ctx, &workflowservice.DescribeNamespaceRequest{Namespace: "tools"})
	require.NoError(t, err)
	assert.Equal(t, 48*time.Hour, desc.GetConfig().GetWorkflowExecutionRetentionTtl().AsDuration())
	requireSearchAttributes(t, c, "tools")
	assert.Equal(t, "hello ns", runGreet(t, c, "greet-ns", "ns"))
}

func TestDataDirSurvivesRestart(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")

	first, err := Start(context.Background(), Options{DataDir: dir, Logger: testLogger(t)})
	require.NoError(t, err)
	c := dial(t, first)
	assert.Equal(t, "hello disk", runGreet(t, c, "greet-disk", "disk"))
	c.Close()
	require.NoError(t, first.Stop())
	assert.FileExists(t, filepath.Join(dir, "temporal.db"))
	assert.FileExists(t, filepath.Join(dir, "visibility.db"))

	second := start(t, Options{DataDir: dir})
	c = dial(t, second)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	var got string
	require.NoError(t, c.GetWorkflow(ctx, "greet-disk", "").Get(ctx, &got))
	assert.Equal(t, "hello disk", got)
	requireSearchAttributes(t, c, "default")
}

// A new data directory keeps visibility records in visibility.db, apart from the main store.
func TestDataDirKeepsVisibilityApart(t *testing.T) {
	dir := t.TempDir()
	srv := start(t, Options{DataDir: dir})
	c := dial(t, srv)
	assert.Equal(t, "hello apart", runGreet(t, c, "greet-apart", "apart"))
	requireListed(t, c, "greet-apart")
	assert.Equal(t, 1, visibilityRows(t, filepath.Join(dir, visibilityFileName), "greet-apart"))
	assert.Equal(t, 0, visibilityRows(t, filepath.Join(dir, dbFileName), "greet-apart"))
}

// A data directory whose temporal.db predates visibility.db keeps its visibility records in
// temporal.db, where its existing workflows are listed.
func TestDataDirOfTheOldLayoutKeepsVisibilityInMainStore(t *testing.T) {
	dir := t.TempDir()
	cfg := fileDB(filepath.Join(dir, dbFileName))
	require.NoError(t, sqlite.SetupSchema(cfg))
	ns, err := sqlite.NewNamespaceConfig(clusterName, "default", false, searchattr.Definitions())
	require.NoError(t, err)
	require.NoError(t, sqlite.CreateNamespaces(cfg, ns))

	core, notes := observer.New(zapcore.InfoLevel)
	srv := start(t, Options{DataDir: dir, Logger: zap.New(core)})
	c := dial(t, srv)
	assert.Equal(t, "hello old", runGreet(t, c, "greet-old", "old"))
	assert.Equal(t, 1, notes.FilterMessageSnippet("visibility stays in temporal.db").Len(), "the operator is told")
	requireListed(t, c, "greet-old")
	assert.Equal(t, 1, visibilityRows(t, filepath.Join(dir, dbFileName), "greet-old"))
	assert.NoFileExists(t, filepath.Join(dir, visibilityFileName))
}

// visibility.db without temporal.db is a main store lost or moved: refused, nothing created.
func TestDataDirWithOnlyVisibilityIsRefused(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, visibilityFileName), nil, 0o600))
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	_, err := Start(ctx, Options{DataDir: dir, Logger: testLogger(t)})
	require.ErrorContains(t, err, "has visibility.db but no temporal.db")
	assert.NoFileExists(t, filepath.Join(dir, dbFileName))
}

// requireListed waits until a list of the namespace shows workflow id (visibility is written
// asynchronously).
func requireListed(t *testing.T, c client.Client, id string) {
	t.Helper()
	require.Eventually(t, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: "WorkflowId = '" + id + "'"})
		return err == nil && len(resp.GetExecutions()) == 1
	}, testTimeout, 20*time.Millisecond)
}

// visibilityRows counts the visibility records of workflow id in the SQLite file at path.
func visibilityRows(t *testing.T, path, id string) int {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	require.NoError(t, err)
	defer db.Close()
	var n int
	require.NoError(t, db.QueryRow("SELECT count(*) FROM executions_visibility WHERE workflow_id = ?", id).Scan(&n))
	return n
}

func TestReopenAddsMissingSearchAttributes(t *testing.T) {
	dir := t.TempDir()
	// A database whose namespace was created without the attributes (as another tool would).
	cfg := &config.SQL{
		PluginName:        sqliteplugin.PluginName,
		DatabaseName:      filepath.Join(dir, dbFileName),
		ConnectAttributes: map[string]string{"mode": "rwc"},
	}
	require.NoError(t, sqlite.SetupSchema(cfg))
	ns, err := sqlite.NewNamespaceConfig(clusterName, "default", false, nil)
	require.NoError(t, err)
	require.NoError(t, sqlite.CreateNamespaces(cfg, ns))

	srv := start(t, Options{DataDir: dir})
	c := dial(t, srv)
	requireSearchAttributes(t, c, "default")
	assert.Equal(t, "hello again", runGreet(t, c, "greet-again", "again"))
}

func TestTwoInMemoryServers(t *testing.T) {
	a := start(t, Options{})
	b := start(t, Options{})
	require.NotEqual(t, a.FrontendAddress(), b.FrontendAddress())
	ca, cb := dial(t, a), dial(t, b)

	assert.Equal(t, "hello a", runGreet(t, ca, "greet-shared-id", "a"))
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	_, err := cb.DescribeWorkflowExecution(ctx, "greet-shared-id", "")
	var notFound *serviceerror.NotFound
	require.ErrorAs(t, err, &notFound, "server b must not see server a's workflow")
	assert.Equal(t, "hello b", runGreet(t, cb, "greet-shared-id", "b"))
}

func TestUI(t *testing.T) {
	srv := start(t, Options{UI: true})
	require.NotEmpty(t, srv.UIAddress())
	c := dial(t, srv)
	require.Equal(t, "hello ui", runGreet(t, c, "greet-ui", "ui"))

	index := httpGet(t, srv.UIAddress()+"/")
	assert.Contains(t, index, "<html")
	// DNS rebinding: a page served as evil.example whose name now resolves to 127.0.0.1 makes
	// the browser send Host: evil.example to this port. The UI must not answer it.
	for _, path := range []string{"/", "/api/v1/namespaces/default/workflows"} {
		req, err := http.NewRequest(http.MethodGet, srv.UIAddress()+path, nil)
		require.NoError(t, err)
		req.Host = "evil.example"
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Equal(t, http.StatusMisdirectedRequest, resp.StatusCode, path)
		assert.NotContains(t, string(body), "<html", path)
	}

	type listing struct {
		Executions []struct {
			Execution struct {
				WorkflowID string `json:"workflowId"`
			} `json:"execution"`
			Status string `json:"status"`
		} `json:"executions"`
	}
	// Visibility is eventually consistent: the list shows the workflow closed soon after it ends.
	require.Eventually(t, func() bool {
		var l listing
		if err := json.Unmarshal([]byte(httpGet(t, srv.UIAddress()+"/api/v1/namespaces/default/workflows")), &l); err != nil {
			return false
		}
		for _, e := range l.Executions {
			if e.Execution.WorkflowID == "greet-ui" && e.Status == "WORKFLOW_EXECUTION_STATUS_COMPLETED" {
				return true
			}
		}
		return false
	}, testTimeout, 20*time.Millisecond)
}

// httpGet returns the body of a 200 response to GET url.
func httpGet(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	return string(body)
}

func TestFixedPorts(t *testing.T) {
	free, err := freePorts(2)
	require.NoError(t, err)
	srv := start(t, Options{FrontendPort: free[0], UI: true, UIPort: free[1]})
	assert.Equal(t, "127.0.0.1:"+strconv.Itoa(free[0]), srv.FrontendAddress())
	assert.Equal(t, "http://127.0.0.1:"+strconv.Itoa(free[1]), srv.UIAddress())

	_, err = Start(context.Background(), Options{FrontendPort: free[0]})
	require.Error(t, err, "the frontend port is taken")
	_, err = Start(context.Background(), Options{UI: true, UIPort: free[1]})
	require.Error(t, err, "the UI port is taken")
}

func TestStopIsIdempotent(t *testing.T) {
	srv, err := Start(context.Background(), Options{UI: true})
	require.NoError(t, err)
	require.NoError(t, srv.Stop())
	require.NoError(t, srv.Stop())

	_, err = net.DialTimeout("tcp", srv.FrontendAddress(), time.Second)
	assert.Error(t, err, "frontend must not accept connections after Stop")
	_, err = http.Get(srv.UIAddress())
	assert.Error(t, err, "UI must not answer after Stop")
}

func TestOptionsErrors(t *testing.T) {
	notADir := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(notADir, nil, 0o600))
	tests := []struct {
		name string
		give Options
	}{
		{name: "negative retention", give: Options{Retention: -time.Hour}},
		{name: "frontend port too large", give: Options{FrontendPort: 70000}},
		{name: "negative UI port", give: Options{UIPort: -1}},
		{name: "data dir is a file", give: Options{DataDir: notADir}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, err := Start(context.Background(), tt.give)
			assert.Error(t, err)
			assert.Nil(t, srv)
		})
	}
}

// BenchmarkStart measures start-to-ready and Stop of an in-memory server, reported as
// start-ms and stop-ms per run:
//
//	go test -run '^$' -bench Start -benchtime 10x ./cmd/toolgate/internal/devserver/
func BenchmarkStart(b *testing.B) {
	var startTotal, stopTotal time.Duration
	for b.Loop() {
		t0 := time.Now()
		srv, err := Start(context.Background(), Options{})
		if err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if err := srv.Stop(); err != nil {
			b.Fatal(err)
		}
		startTotal += t1.Sub(t0)
		stopTotal += time.Since(t1)
	}
	b.ReportMetric(float64(startTotal.Milliseconds())/float64(b.N), "start-ms")
	b.ReportMetric(float64(stopTotal.Milliseconds())/float64(b.N), "stop-ms")
}

func TestRetryWhenPortTaken(t *testing.T) {
	opts, err := Options{Logger: testLogger(t)}.withDefaults()
	require.NoError(t, err)
	store, err := openStore(opts)
	require.NoError(t, err)
	// The first pick hands the history service a port someone else holds.
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer taken.Close()
	picks := 0
	pick := func() (servicePorts, error) {
		picks++
		ports, err := pickPorts(0)
		if picks == 1 {
			ports[1] = taken.Addr().(*net.TCPAddr).Port
		}
		return ports, err
	}
	level := zap.NewAtomicLevelAt(zapcore.WarnLevel)
	logger := newServerLogger(opts.Logger, level)

	srv, ports, err := startWithRetry(store, dynamicConfig(nil), nil, logger, pick, opts.Logger)
	require.NoError(t, err)
	defer func() {
		level.SetLevel(silent)
		assert.NoError(t, srv.Stop())
	}()
	assert.Equal(t, 2, picks)
	assert.NotEqual(t, taken.Addr().(*net.TCPAddr).Port, ports[1])
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	require.NoError(t, waitReady(ctx, hostPort(ports[0]), opts.Namespace))
}

// BenchmarkRoundTrip measures one workflow with one activity, started and awaited one at a time
// through a real worker, on an in-memory and on a file database:
//
//	go test -run '^$' -bench RoundTrip -benchtime 200x ./cmd/toolgate/internal/devserver/
func BenchmarkRoundTrip(b *testing.B) {
	benchmarks := []struct {
		name    string
		dataDir bool
	}{
		{name: "memory"},
		{name: "file", dataDir: true},
	}
	for _, bb := range benchmarks {
		b.Run(bb.name, func(b *testing.B) {
			opts := Options{}
			if bb.dataDir {
				opts.DataDir = b.TempDir()
			}
			srv, err := Start(context.Background(), opts)
			require.NoError(b, err)
			b.Cleanup(func() { assert.NoError(b, srv.Stop()) })
			c := dial(b, srv)
			w := worker.New(c, "bench", worker.Options{})
			w.RegisterWorkflow(greetWorkflow)
			w.RegisterActivity(greetActivity)
			require.NoError(b, w.Start())
			b.Cleanup(w.Stop)

			ctx := context.Background()
			for b.Loop() {
				run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: "bench"}, greetWorkflow, "bench")
				require.NoError(b, err)
				require.NoError(b, run.Get(ctx, nil))
			}
		})
	}
}

// ServerLogLevel filters the server's own lines only: the package's notes about the server (here
// an open data directory) reach the logger whatever it says.
func TestServerLogLevelLeavesNotesAlone(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.Chmod(dir, 0o755))
	core, logs := observer.New(zapcore.DebugLevel)
	level := zapcore.ErrorLevel
	start(t, Options{DataDir: dir, Logger: zap.New(core), ServerLogLevel: &level})

	require.Equal(t, 1, logs.FilterMessageSnippet("open to other users").Len(), "the note passes")
	for _, e := range logs.All() {
		if e.Level < zapcore.ErrorLevel {
			assert.Contains(t, e.Message, "open to other users", "no server line below the level")
		}
	}
}
