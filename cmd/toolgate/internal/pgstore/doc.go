// Package pgstore configures Temporal's main and visibility stores on PostgreSQL and sets up
// their schemas with the server module's own SQL tooling (the code behind temporal-sql-tool), in
// process. The embedded dev server (`toolgate dev --db postgres://...`) and the test cluster of
// cmd/toolgate/internal/cluster both use it.
//
// # Setup is idempotent
//
// [Setup] creates each database when missing, creates the schema version tables when missing,
// and brings the schema to the server's current version: on a database set up before it changes
// nothing, on an older one it applies the missing versions, as `temporal-sql-tool
// create-database`, `setup-schema -v 0.0` and `update-schema` do.
//
// # Connection parameters and their errors
//
// [ParseURL] takes libpq's TLS parameters (sslmode, sslrootcert, sslcert, sslkey, ...) and hands
// them to the server's driver (lib/pq) unchanged, after reading the certificate files they name:
// a missing or malformed file is an error naming it. The server's own connection code reports any
// failure to connect as "no usable database connection found", so [Setup] first connects with
// [Ping], which returns the driver's error (an x509 verification failure, a refused password)
// with the address and TLS parameters in play.
package pgstore
