package blobs

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// SQLStore keeps blobs in PostgreSQL, table toolgate_blobs (key, data bytea, stored timestamptz),
// for workers on many machines. It uses database/sql only: DB may come from any PostgreSQL
// driver (toolgate uses lib/pq). A blob's age is the database's clock at its Put. Call
// EnsureSchema once before use.
type SQLStore struct {
	// DB is the database. Required.
	DB *sql.DB
}

var _ Store = (*SQLStore)(nil)

// schemaLockKey is the advisory lock EnsureSchema holds: concurrent CREATE ... IF NOT EXISTS of
// one table can fail on PostgreSQL's catalog.
const schemaLockKey = 0x746f6f6c626c6f62 // "toolblob"

var schema = []string{
	`CREATE TABLE IF NOT EXISTS toolgate_blobs (
		key    text        PRIMARY KEY,
		data   bytea       NOT NULL,
		stored timestamptz NOT NULL DEFAULT now()
	)`,
	`CREATE INDEX IF NOT EXISTS toolgate_blobs_stored ON toolgate_blobs (stored)`,
	// Out of line, uncompressed: sealed bytes and most media do not compress, and trying costs
	// a pass over every megabyte.
	`ALTER TABLE toolgate_blobs ALTER COLUMN data SET STORAGE EXTERNAL`,
}

// EnsureSchema creates the table when missing; concurrent calls are safe.
func (s *SQLStore) EnsureSchema(ctx context.Context) error {
	if s.DB == nil {
		return errors.New("blob SQL store: no database")
	}
	tx, err := s.DB.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("create blobs schema: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // after Commit: sql.ErrTxDone
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(schemaLockKey)); err != nil {
		return fmt.Errorf("lock blobs schema: %w", err)
	}
	for _, stmt := range schema {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("create blobs schema: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("create blobs schema: %w", err)
	}
	return nil
}

func (s *SQLStore) ready(key string) error {
	if s.DB == nil {
		return errors.New("blob SQL store: no database")
	}
	return CheckKey(key)
}

// Put stores data under key (an upsert: the blob's age restarts).
func (s *SQLStore) Put(ctx context.Context, key string, data []byte) error {
	if err := s.ready(key); err != nil {
		return err
	}
	if data == nil {
		data = []byte{} // NOT NULL
	}
	_, err := s.DB.ExecContext(ctx, `INSERT INTO toolgate_blobs (key, data, stored) VALUES ($1, $2, now())
		ON CONFLICT (key) DO UPDATE SET data = EXCLUDED.data, stored = EXCLUDED.stored`, key, data)
	if err != nil {
		return fmt.Errorf("put blob: %w", err)
	}
	return nil
}

// Get reads the blob under key.
func (s *SQLStore) Get(ctx context.Context, key string) ([]byte, error) {
	if err := s.ready(key); err != nil {
		return nil, err
	}
	var data []byte
	err := s.DB.QueryRowContext(ctx, `SELECT data FROM toolgate_blobs WHERE key = $1`, key).Scan(&data)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("blob %s: %w", key, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("get blob: %w", err)
	}
	return data, nil
}

// Delete removes the blob under key.
func (s *SQLStore) Delete(ctx context.Context, key string) error {
	if err := s.ready(key); err != nil {
		return err
	}
	if _, err := s.DB.ExecContext(ctx, `DELETE FROM toolgate_blobs WHERE key = $1`, key); err != nil {
		return fmt.Errorf("delete blob: %w", err)
	}
	return nil
}

// Sweep removes the blobs stored before cutoff.
func (s *SQLStore) Sweep(ctx context.Context, cutoff time.Time) (int, error) {
	if s.DB == nil {
		return 0, errors.New("blob SQL store: no database")
	}
	res, err := s.DB.ExecContext(ctx, `DELETE FROM toolgate_blobs WHERE stored < $1`, cutoff)
	if err != nil {
		return 0, fmt.Errorf("sweep blobs: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("sweep blobs: %w", err)
	}
	return int(n), nil
}
