package pgstore

import (
	"errors"
	"fmt"
	"maps"
	"net"
	"net/url"
	"strings"
	"time"

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

// ParseURL returns the stores of a URL postgres://user[:password]@host[:port][/database][?params].
// The database defaults to [DefaultDatabase], the port to 5432; its visibility store is
// database+[VisibilitySuffix]. The parameters are libpq's, passed to the driver as they are:
// sslmode (disable, the default, allow, prefer, require, verify-ca, verify-full), sslrootcert (a
// PEM file of CA certificates, or "system"; without it verify-ca and verify-full check against
// the system's roots), sslcert and sslkey (a client certificate and its key, together),
// sslsni, ssl_min_protocol_version, ssl_max_protocol_version, connect_timeout and
// application_name. Any other parameter is an error, and so is a certificate file that cannot
// be read or parsed (the error names it), or a certificate file without sslmode.
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
	attrs, err := connectAttributes(u.Query())
	if err != nil {
		return Stores{}, fmt.Errorf("parse PostgreSQL URL: %w", err)
	}
	if len(attrs) > 0 {
		stores.Main.ConnectAttributes, stores.Visibility.ConnectAttributes = attrs, maps.Clone(attrs)
	}
	return stores, nil
}

// Redacted is the URL of the main store without its password, what logs and output may show:
// its parameters name files, never secrets.
func (s Stores) Redacted() string {
	return s.url(s.Main.DatabaseName, false)
}

// url is the URL of database on the main store's server, with its parameters (sorted) and,
// forDriver, its password and sslmode=disable when sslmode is unset: what the server's driver
// does (lib/pq alone would require TLS).
func (s Stores) url(database string, forDriver bool) string {
	u := url.URL{Scheme: "postgres", User: url.User(s.Main.User), Host: s.Main.ConnectAddr, Path: "/" + database}
	q := url.Values{}
	for k, v := range s.Main.ConnectAttributes {
		q.Set(k, v)
	}
	if forDriver {
		if s.Main.Password != "" {
			u.User = url.UserPassword(s.Main.User, s.Main.Password)
		}
		if !q.Has("sslmode") {
			q.Set("sslmode", "disable")
		}
	}
	u.RawQuery = q.Encode()
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
