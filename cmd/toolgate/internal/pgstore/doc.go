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
package pgstore
