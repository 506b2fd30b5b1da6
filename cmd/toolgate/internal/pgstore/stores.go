package pgstore

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"go.temporal.io/server/common/auth"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/persistence/sql/sqlplugin/postgresql"
)

// Defaults of a store's connection pool.
const (
	maxConns        = 20
	maxConnLifetime = time.Hour
)

// VisibilitySuffix names the visibility database after the main one: "temporal" and
// "temporal_visibility".
const VisibilitySuffix = "_visibility"

// DefaultDatabase is the main database when a URL names none.
const DefaultDatabase = "temporal"

// Stores holds the SQL configuration of Temporal's main and visibility stores.
type Stores struct {
	Main       config.SQL `json:"main"`
	Visibility config.SQL `json:"visibility"`
}

// NewStores returns the stores of database (its visibility store in database+VisibilitySuffix)
// on the PostgreSQL server at address (host:port), as user with password ("" for none).
func NewStores(address, user, password, database string) Stores {
	store := func(db string) config.SQL {
		return config.SQL{
			PluginName:      postgresql.PluginName,
			DatabaseName:    db,
			ConnectAddr:     address,
			ConnectProtocol: "tcp",
			User:            user,
			Password:        password,
			MaxConns:        maxConns,
			MaxIdleConns:    maxConns,
			MaxConnLifetime: maxConnLifetime,
		}
	}
	return Stores{Main: store(database), Visibility: store(database + VisibilitySuffix)}
}

// ParseURL returns the stores of a URL postgres://user[:password]@host[:port][/database]
// [?sslmode=disable|require|verify-full]. The database defaults to [DefaultDatabase], the port to
// 5432, sslmode to disable; its visibility store is database+[VisibilitySuffix].
func ParseURL(raw string) (Stores, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return Stores{}, fmt.Errorf("parse PostgreSQL URL: %w", redact(err))
	}
	if u.Scheme != "postgres" && u.Scheme != "postgresql" {
		return Stores{}, fmt.Errorf("parse PostgreSQL URL: scheme %q, want postgres://", u.Scheme)
	}
	if u.Hostname() == "" || u.User == nil || u.User.Username() == "" {
		return Stores{}, errors.New("parse PostgreSQL URL: want postgres://user[:password]@host[:port][/database]")
	}
	port := u.Port()
	if port == "" {
		port = "5432"
	}
	database := strings.TrimPrefix(u.Path, "/")
	if database == "" {
		database = DefaultDatabase
	}
	if strings.ContainsAny(database, `/"`) {
		return Stores{}, fmt.Errorf("parse PostgreSQL URL: database name %q", database)
	}
	password, _ := u.User.Password()
	stores := NewStores(net.JoinHostPort(u.Hostname(), port), u.User.Username(), password, database)
	var tls *auth.TLS
	for key, values := range u.Query() {
		if key != "sslmode" || len(values) != 1 {
			return Stores{}, fmt.Errorf("parse PostgreSQL URL: unsupported parameter %q (only sslmode)", key)
		}
		switch values[0] {
		case "disable":
		case "require":
			tls = &auth.TLS{Enabled: true}
		case "verify-full":
			tls = &auth.TLS{Enabled: true, EnableHostVerification: true, ServerName: u.Hostname()}
		default:
			return Stores{}, fmt.Errorf("parse PostgreSQL URL: sslmode %q (want disable, require or verify-full)", values[0])
		}
	}
	if tls != nil {
		main, vis := *tls, *tls
		stores.Main.TLS, stores.Visibility.TLS = &main, &vis
	}
	return stores, nil
}

// Redacted is the URL of the main store without its password, what logs and output may show.
func (s Stores) Redacted() string {
	u := url.URL{Scheme: "postgres", User: url.User(s.Main.User), Host: s.Main.ConnectAddr, Path: "/" + s.Main.DatabaseName}
	return u.String()
}

// redact drops a url.Error's URL, which may hold the password.
func redact(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
