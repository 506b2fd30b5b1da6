package pgstore

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/lib/pq"
)

// pingTimeout bounds [Ping]'s connection when its context has no deadline.
const pingTimeout = 30 * time.Second

// Ping connects to the maintenance database ("postgres") of the stores' server with the main
// store's user, password and parameters, through the driver the server uses (lib/pq), and runs
// one round trip. The server's own connection code reports any connection failure as "no usable
// database connection found"; Ping returns the driver's error instead, naming the address and the
// TLS parameters in play: a certificate signed by an unknown authority, a host name the server's
// certificate does not cover, a key file others can read.
func Ping(ctx context.Context, stores Stores) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, pingTimeout)
		defer cancel()
	}
	err := ping(ctx, stores.url(adminDatabase, true))
	if err == nil {
		return nil
	}
	where := stores.Main.ConnectAddr
	var tlsParams []string
	for _, k := range append([]string{"sslmode"}, tlsFileParams...) {
		if v, ok := stores.Main.ConnectAttributes[k]; ok {
			tlsParams = append(tlsParams, k+"="+v)
		}
	}
	if len(tlsParams) > 0 {
		where += " (" + strings.Join(tlsParams, " ") + ")"
	}
	return fmt.Errorf("connect to PostgreSQL at %s: %w", where, err)
}

// ping opens one connection of dsn and pings it.
func ping(ctx context.Context, dsn string) error {
	connector, err := pq.NewConnector(dsn)
	if err != nil {
		return err
	}
	db := sql.OpenDB(connector)
	defer db.Close()
	return db.PingContext(ctx)
}
