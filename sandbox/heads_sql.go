package sandbox

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
)

// SQLHeads keeps the heads in PostgreSQL table toolgate_sandbox_heads (workspace, version, the
// head as JSON, updated). Swap is one statement: UPDATE ... WHERE version = prev, or INSERT ...
// ON CONFLICT DO NOTHING for a first head, so of two workers swapping from one version one alone
// changes a row. Call EnsureSchema once before use.
type SQLHeads struct {
	// DB is the database. Required.
	DB *sql.DB
}

var _ Heads = (*SQLHeads)(nil)

var headsSchema = []string{
	`CREATE TABLE IF NOT EXISTS toolgate_sandbox_heads (
		workspace text        PRIMARY KEY,
		version   bigint      NOT NULL,
		head      text        NOT NULL,
		updated   timestamptz NOT NULL
	)`,
	`CREATE INDEX IF NOT EXISTS toolgate_sandbox_heads_updated ON toolgate_sandbox_heads (updated)`,
}

// EnsureSchema creates the table when missing; concurrent calls are safe.
func (h *SQLHeads) EnsureSchema(ctx context.Context) error {
	return ensureSchema(ctx, h.DB, "heads", headsSchema)
}

func (h *SQLHeads) ready(workspace string) error {
	if h.DB == nil {
		return errors.New("sandbox SQL heads: no database")
	}
	if workspace == "" {
		return errors.New("sandbox heads: empty workspace name")
	}
	return nil
}

func decodeHead(data string) (Head, error) {
	var head Head
	if err := json.Unmarshal([]byte(data), &head); err != nil {
		return Head{}, fmt.Errorf("decode head: %w", err)
	}
	return head, nil
}

// Get reads the workspace's head.
func (h *SQLHeads) Get(ctx context.Context, workspace string) (Head, error) {
	if err := h.ready(workspace); err != nil {
		return Head{}, err
	}
	var data string
	err := h.DB.QueryRowContext(ctx, `SELECT head FROM toolgate_sandbox_heads WHERE workspace = $1`, workspace).Scan(&data)
	if errors.Is(err, sql.ErrNoRows) {
		return Head{}, fmt.Errorf("workspace %q: %w", workspace, ErrNoWorkspace)
	}
	if err != nil {
		return Head{}, fmt.Errorf("get head: %w", err)
	}
	return decodeHead(data)
}

// Swap makes next the head if the head's version is still prev.
func (h *SQLHeads) Swap(ctx context.Context, workspace string, prev int64, next Head) error {
	if err := h.ready(workspace); err != nil {
		return err
	}
	if err := checkSwap(workspace, prev, next); err != nil {
		return err
	}
	data, err := json.Marshal(next)
	if err != nil {
		return fmt.Errorf("encode head: %w", err)
	}
	var res sql.Result
	if prev == 0 {
		res, err = h.DB.ExecContext(ctx, `INSERT INTO toolgate_sandbox_heads (workspace, version, head, updated)
			VALUES ($1, $2, $3, $4) ON CONFLICT (workspace) DO NOTHING`, workspace, next.Version, string(data), next.Updated)
	} else {
		res, err = h.DB.ExecContext(ctx, `UPDATE toolgate_sandbox_heads SET version = $2, head = $3, updated = $4
			WHERE workspace = $1 AND version = $5`, workspace, next.Version, string(data), next.Updated, prev)
	}
	if err != nil {
		return fmt.Errorf("swap head: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("swap head: %w", err)
	}
	if n == 1 {
		return nil
	}
	cur, err := h.Get(ctx, workspace)
	if errors.Is(err, ErrNoWorkspace) {
		return fmt.Errorf("%w: workspace %q has no head (removed), not version %d", ErrConflict, workspace, prev)
	}
	if err != nil {
		return fmt.Errorf("%w: workspace %q is no longer at version %d", ErrConflict, workspace, prev)
	}
	return conflictError(workspace, prev, cur)
}

// List reads every head, by workspace name.
func (h *SQLHeads) List(ctx context.Context) ([]Head, error) {
	if h.DB == nil {
		return nil, errors.New("sandbox SQL heads: no database")
	}
	rows, err := h.DB.QueryContext(ctx, `SELECT head FROM toolgate_sandbox_heads ORDER BY workspace COLLATE "C"`)
	if err != nil {
		return nil, fmt.Errorf("list heads: %w", err)
	}
	defer rows.Close()
	var heads []Head
	for rows.Next() {
		var data string
		if err := rows.Scan(&data); err != nil {
			return nil, fmt.Errorf("list heads: %w", err)
		}
		head, err := decodeHead(data)
		if err != nil {
			return nil, err
		}
		heads = append(heads, head)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list heads: %w", err)
	}
	return heads, nil
}

// Delete removes the workspace's head.
func (h *SQLHeads) Delete(ctx context.Context, workspace string) error {
	if err := h.ready(workspace); err != nil {
		return err
	}
	if _, err := h.DB.ExecContext(ctx, `DELETE FROM toolgate_sandbox_heads WHERE workspace = $1`, workspace); err != nil {
		return fmt.Errorf("delete head: %w", err)
	}
	return nil
}
