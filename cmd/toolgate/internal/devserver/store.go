package devserver

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"go.temporal.io/server/common/config"
	sqliteplugin "go.temporal.io/server/common/persistence/sql/sqlplugin/sqlite"
	"go.temporal.io/server/common/primitives/timestamp"
	"go.temporal.io/server/schema/sqlite"
	"go.uber.org/zap"

	"github.com/toolgate/toolgate/cmd/toolgate/internal/pgstore"
	"github.com/toolgate/toolgate/internal/searchattr"
)

// The SQLite files inside Options.DataDir: the main store, and visibility (the records lists and
// the Web UI read) in a file of its own.
const (
	dbFileName         = "temporal.db"
	visibilityFileName = "visibility.db"
)

// clusterName is the name of the single local cluster.
const clusterName = "active"

// stores are the server's persistence: main, and visibility when it is a store of its own (nil:
// the main store holds visibility too, as in a data directory of the old layout).
type stores struct {
	main, visibility *config.SQL
	redacted         string // PostgreSQL's URL without password; "" for SQLite
}

// openStore returns the stores for opts (PostgreSQL with opts.Postgres, else SQLite), with the
// schema in place and the namespace created (with the search attributes and retention) when
// missing.
//
// The server's SQLite plugin keeps one connection per DSN for the life of the process (it never
// closes them), so an in-memory database needs a name no other server in the process uses, and
// a file stays open after Stop (a later Start on the same file reuses the connection).
func openStore(opts Options) (stores, error) {
	if opts.Postgres != "" {
		return openPostgres(opts)
	}
	st, err := openSQLite(opts)
	if err != nil {
		return stores{}, err
	}
	if err := createNamespace(st.main, opts); err != nil {
		return stores{}, err
	}
	return st, nil
}

// openPostgres sets up the databases and schemas of opts.Postgres when missing (or older than
// the server's) with the server's own SQL tooling.
func openPostgres(opts Options) (stores, error) {
	pg, err := pgstore.ParseURL(opts.Postgres)
	if err != nil {
		return stores{}, err
	}
	if err := pgstore.Setup(pg); err != nil {
		return stores{}, fmt.Errorf("set up %s: %w", pg.Redacted(), err)
	}
	if err := createNamespace(&pg.Main, opts); err != nil {
		return stores{}, err
	}
	return stores{main: &pg.Main, visibility: &pg.Visibility, redacted: pg.Redacted()}, nil
}

// createNamespace creates opts.Namespace in the main store unless it exists.
func createNamespace(cfg *config.SQL, opts Options) error {
	ns, err := sqlite.NewNamespaceConfig(clusterName, opts.Namespace, false, searchattr.Definitions())
	if err != nil {
		return fmt.Errorf("configure namespace %q: %w", opts.Namespace, err)
	}
	ns.Detail.Config.Retention = timestamp.DurationPtr(opts.Retention)
	// CreateNamespaces (generic SQL despite its package) skips a namespace that exists;
	// ensureSearchAttributes covers that case.
	if err := sqlite.CreateNamespaces(cfg, ns); err != nil {
		return fmt.Errorf("create namespace %q: %w", opts.Namespace, err)
	}
	return nil
}

// openSQLite returns the SQLite stores for opts, with the schema in place.
//
// Visibility has a database of its own: SQLite runs one statement at a time per database, and
// the visibility queue's batched writes would otherwise hold up every call's own writes (about
// 40% of calls waited ~10 ms behind one). A data directory whose temporal.db predates
// visibility.db keeps its visibility records in temporal.db, where the server wrote them.
func openSQLite(opts Options) (stores, error) {
	if opts.DataDir == "" {
		// The plugin creates the schema itself when it opens an in-memory database.
		name := "toolgate-" + rand.Text()
		return stores{main: memoryDB(name), visibility: memoryDB(name + "-visibility")}, nil
	}
	dir, err := filepath.Abs(opts.DataDir)
	if err != nil {
		return stores{}, fmt.Errorf("resolve data dir %q: %w", opts.DataDir, err)
	}
	if err := prepareDataDir(dir, opts.Logger); err != nil {
		return stores{}, err
	}
	main, vis := fileDB(filepath.Join(dir, dbFileName)), fileDB(filepath.Join(dir, visibilityFileName))
	mainExists, err := exists(main.DatabaseName)
	if err != nil {
		return stores{}, err
	}
	visExists, err := exists(vis.DatabaseName)
	if err != nil {
		return stores{}, err
	}
	switch {
	case mainExists && !visExists:
		// Created before visibility.db: visibility stays where the server wrote it.
		if opts.Logger != nil {
			opts.Logger.Info("visibility stays in temporal.db, as this data directory was created; a new data directory keeps it in visibility.db, where its writes do not hold up the calls'",
				zap.String("dir", dir))
		}
		return stores{main: main}, nil
	case mainExists:
		return stores{main: main, visibility: vis}, nil
	case visExists:
		return stores{}, fmt.Errorf("data dir %s has %s but no %s: restore %s, or remove %s to start empty",
			dir, visibilityFileName, dbFileName, dbFileName, visibilityFileName)
	}
	// Visibility first: a main store without visibility.db would be taken for the old layout.
	if err := setupSchema(vis); err != nil {
		return stores{}, err
	}
	if err := setupSchema(main); err != nil {
		_ = os.Remove(vis.DatabaseName)
		return stores{}, err
	}
	return stores{main: main, visibility: vis}, nil
}

// memoryDB is an in-memory database named name, unique in the process.
func memoryDB(name string) *config.SQL {
	return &config.SQL{
		PluginName:        sqliteplugin.PluginName,
		DatabaseName:      name,
		ConnectAttributes: map[string]string{"mode": "memory", "cache": "shared"},
	}
}

// fileDB is the database file at path.
//
// Write-ahead log, synced at checkpoints: a commit costs no fsync (3x faster per tool call here).
// A crash of the process loses nothing; a power loss can lose the last commits but never corrupts
// the file. SQLite keeps <file>-wal and <file>-shm beside it.
func fileDB(path string) *config.SQL {
	return &config.SQL{
		PluginName:   sqliteplugin.PluginName,
		DatabaseName: path,
		ConnectAttributes: map[string]string{
			"mode":         "rwc",
			"journal_mode": "wal",
			"synchronous":  "normal",
		},
	}
}

func exists(path string) (bool, error) {
	_, err := os.Stat(path)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	default:
		return false, fmt.Errorf("stat database: %w", err)
	}
}

// setupSchema creates the database file of cfg with the server's schema. A failed setup removes
// the file so the next start tries again instead of opening half a schema.
func setupSchema(cfg *config.SQL) error {
	if err := sqlite.SetupSchema(cfg); err != nil {
		_ = os.Remove(cfg.DatabaseName)
		return fmt.Errorf("set up schema in %s: %w", cfg.DatabaseName, err)
	}
	return nil
}

// dataDirMode is the mode of a data directory toolgate creates: the database holds every call's
// arguments and results, which may carry secrets, so only the owner may enter it.
const dataDirMode fs.FileMode = 0o700

// prepareDataDir creates dir (and missing parents) with dataDirMode. A directory that already
// exists is left as it is, because it may be one the user shares on purpose (--data-dir .); if
// others may enter it, a warning says so and how to close it.
func prepareDataDir(dir string, logger *zap.Logger) error {
	if err := os.MkdirAll(dir, dataDirMode); err != nil {
		return fmt.Errorf("create data dir: %w", err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("check data dir: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("check data dir: %s is not a directory", dir)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 && logger != nil {
		logger.Warn("the data directory is open to other users; it holds every call's arguments and results",
			zap.String("dir", dir), zap.Stringer("mode", perm), zap.String("fix", "chmod 700 "+dir))
	}
	return nil
}
