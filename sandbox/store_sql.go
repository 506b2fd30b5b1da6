package sandbox

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/toolgate/toolgate/blobs"
	"github.com/toolgate/toolgate/codec"
)

// SQLStore is a Store in PostgreSQL, for workers on many machines: objects in table
// toolgate_sandbox_objects (SQLObjects, sealed with keys when keys is not nil), heads in
// toolgate_sandbox_heads (SQLHeads). It creates both tables when missing. The objects have a
// table of their own: the part store's sweep by age (toolgate_blobs) would take a workspace's
// objects. db may come from any PostgreSQL driver (toolgate uses lib/pq).
func SQLStore(ctx context.Context, db *sql.DB, keys codec.KeySource) (Store, error) {
	objects := &SQLObjects{DB: db}
	heads := &SQLHeads{DB: db}
	if err := objects.EnsureSchema(ctx); err != nil {
		return Store{}, err
	}
	if err := heads.EnsureSchema(ctx); err != nil {
		return Store{}, err
	}
	var store blobs.Store = objects
	if keys != nil {
		store = &blobs.Sealed{Store: objects, Keys: keys}
	}
	return Store{Objects: store, Heads: heads}, nil
}

// SQLObjects is a blobs.Store in PostgreSQL table toolgate_sandbox_objects (key, data bytea,
// stored timestamptz), the workspaces' objects. Call EnsureSchema once before use.
type SQLObjects struct {
	// DB is the database. Required.
	DB *sql.DB
}

var _ blobs.Store = (*SQLObjects)(nil)

// schemaLockKey is the advisory lock the sandbox's EnsureSchema calls hold: concurrent
// CREATE ... IF NOT EXISTS of one table can fail on PostgreSQL's catalog.
const schemaLockKey = 0x746f6f6c73616e64 // "toolsand"

var objectsSchema = []string{
	`CREATE TABLE IF NOT EXISTS toolgate_sandbox_objects (
		key    text        PRIMARY KEY,
		data   bytea       NOT NULL,
		stored timestamptz NOT NULL DEFAULT now()
	)`,
	// Out of line, uncompressed: objects are compressed (and sealed) already.
	`ALTER TABLE toolgate_sandbox_objects ALTER COLUMN data SET STORAGE EXTERNAL`,
}

// ensureSchema runs stmts in one transaction holding the schema's advisory lock.
func ensureSchema(ctx context.Context, db *sql.DB, what string, stmts []string) error {
	if db == nil {
		return fmt.Errorf("sandbox %s: no database", what)
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("create %s schema: %w", what, err)
	}
	defer tx.Rollback() //nolint:errcheck // after Commit: sql.ErrTxDone
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(schemaLockKey)); err != nil {
		return fmt.Errorf("lock %s schema: %w", what, err)
	}
	for _, stmt := range stmts {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("create %s schema: %w", what, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("create %s schema: %w", what, err)
	}
	return nil
}

// EnsureSchema creates the table when missing; concurrent calls are safe.
func (s *SQLObjects) EnsureSchema(ctx context.Context) error {
	return ensureSchema(ctx, s.DB, "objects", objectsSchema)
}

func (s *SQLObjects) ready(key string) error {
	if s.DB == nil {
		return errors.New("sandbox objects: no database")
	}
	return blobs.CheckKey(key)
}

// Put stores data under key (an object's key names its bytes: a second Put changes nothing).
func (s *SQLObjects) Put(ctx context.Context, key string, data []byte) error {
	if err := s.ready(key); err != nil {
		return err
	}
	if data == nil {
		data = []byte{} // NOT NULL
	}
	_, err := s.DB.ExecContext(ctx, `INSERT INTO toolgate_sandbox_objects (key, data, stored) VALUES ($1, $2, now())
		ON CONFLICT (key) DO UPDATE SET data = EXCLUDED.data, stored = EXCLUDED.stored`, key, data)
	if err != nil {
		return fmt.Errorf("put object: %w", err)
	}
	return nil
}

// Get reads the object under key.
func (s *SQLObjects) Get(ctx context.Context, key string) ([]byte, error) {
	if err := s.ready(key); err != nil {
		return nil, err
	}
	var data []byte
	err := s.DB.QueryRowContext(ctx, `SELECT data FROM toolgate_sandbox_objects WHERE key = $1`, key).Scan(&data)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("object %s: %w", key, blobs.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("get object: %w", err)
	}
	return data, nil
}

// Delete removes the object under key.
func (s *SQLObjects) Delete(ctx context.Context, key string) error {
	if err := s.ready(key); err != nil {
		return err
	}
	if _, err := s.DB.ExecContext(ctx, `DELETE FROM toolgate_sandbox_objects WHERE key = $1`, key); err != nil {
		return fmt.Errorf("delete object: %w", err)
	}
	return nil
}

var _ blobs.Lister = (*SQLObjects)(nil)

// List calls fn with each object whose key starts with prefix and when it was stored.
func (s *SQLObjects) List(ctx context.Context, prefix string, fn func(key string, stored time.Time) error) error {
	if s.DB == nil {
		return errors.New("sandbox objects: no database")
	}
	rows, err := s.DB.QueryContext(ctx, `SELECT key, stored FROM toolgate_sandbox_objects WHERE starts_with(key, $1)`, prefix)
	if err != nil {
		return fmt.Errorf("list objects: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var key string
		var stored time.Time
		if err := rows.Scan(&key, &stored); err != nil {
			return fmt.Errorf("list objects: %w", err)
		}
		if err := fn(key, stored); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("list objects: %w", err)
	}
	return nil
}

// Sweep removes the objects stored before cutoff. Workspaces never sweep their objects by age
// (Workspaces.Sweep removes whole workspaces); it is here for blobs.Store.
func (s *SQLObjects) Sweep(ctx context.Context, cutoff time.Time) (int, error) {
	if s.DB == nil {
		return 0, errors.New("sandbox objects: no database")
	}
	res, err := s.DB.ExecContext(ctx, `DELETE FROM toolgate_sandbox_objects WHERE stored < $1`, cutoff)
	if err != nil {
		return 0, fmt.Errorf("sweep objects: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("sweep objects: %w", err)
	}
	return int(n), nil
}
