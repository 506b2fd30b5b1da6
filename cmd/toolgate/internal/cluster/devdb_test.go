package cluster_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	tgclient "github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/cmd/toolgate/internal/cluster"
	"github.com/toolgate/toolgate/internal/testbin"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// TestDevOnPostgres: `toolgate dev --db postgres://...` on a PostgreSQL server without toolgate's
// databases creates them with the server's schemas and serves a call; stopped and started again
// on the same databases, it finds that call's result and serves another; PostgreSQL visibility
// lists both by ToolName.
func TestDevOnPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL and toolgate dev")
	}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	toolgateBinary(t) // built (or $TOOLGATE_BIN) before PostgreSQL starts
	pg, err := cluster.StartPostgres(ctx)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, pg.Stop()) })
	url := "postgres://postgres@" + pg.Address() + "/toolgate_dev"

	call := func(id string, left int) toolcore.ToolCall {
		c, err := toolcore.NewToolCall(id, "add", fmt.Appendf(nil, `{"left":%d,"right":1}`, left))
		require.NoError(t, err)
		return c
	}
	first, second := call("pg-first", 41), call("pg-second", 99)

	frontend, stop := startDevOnPostgres(t, ctx, url)
	cl := tgclient.New(dial(t, frontend), tgclient.Options{TaskQueue: wire.DefaultTaskQueue})
	res, err := cl.Execute(ctx, first)
	require.NoError(t, err)
	require.JSONEq(t, `{"sum":42}`, res.Content())
	stop()

	frontend, stop = startDevOnPostgres(t, ctx, url)
	defer stop()
	sdk := dial(t, frontend)
	cl = tgclient.New(sdk, tgclient.Options{TaskQueue: wire.DefaultTaskQueue})
	res, err = cl.Result(ctx, first.ID())
	require.NoError(t, err, "the first call's result survives the restart")
	require.JSONEq(t, `{"sum":42}`, res.Content())
	res, err = cl.Execute(ctx, second)
	require.NoError(t, err)
	require.JSONEq(t, `{"sum":100}`, res.Content())
	query := fmt.Sprintf("%s = 'add' AND %s", wire.SearchAttributeToolName, wire.QueryOKCalls)
	require.NoError(t, waitListed(ctx, sdk, query, 2), query)
}

// startDevOnPostgres starts `toolgate dev --db url --no-ui --port 0`, requires its data line to
// name url, and returns its frontend and a stop function (Ctrl-C; also run at cleanup).
func startDevOnPostgres(t *testing.T, ctx context.Context, url string) (string, func()) {
	t.Helper()
	dev, err := testbin.StartDev(ctx, nil, "--db", url, "--no-ui", "--port", "0", "--log-level", "warn")
	require.NoError(t, err)
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			require.NoError(t, dev.Stop(time.Minute), "toolgate dev --db stops on Ctrl-C\n%s", dev.StderrTail(4000))
		}
	}
	t.Cleanup(stop)
	require.Equal(t, url, dev.Ready["data"], "toolgate dev --db prints its database")
	return dev.Frontend(), stop
}
