package credentials

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/toolgate/toolgate/codec"
)

// SQLStore is a Store in PostgreSQL, for workers on many machines: table
// toolgate_credential_tokens holds one row per principal and provider (the token sealed, what List
// shows in clear), toolgate_credential_pending one per pending consent (the verifier sealed).
// Update runs in a transaction holding pg_advisory_xact_lock of the token, which every worker
// sharing the database respects; TakePending is one DELETE ... RETURNING, so one taker alone gets
// a consent. It uses database/sql only: DB may come from any PostgreSQL driver (toolgate uses
// lib/pq). Call EnsureSchema once before use.
type SQLStore struct {
	// DB is the database. Required.
	DB *sql.DB
	// Keyring seals every token and verifier, as FileStore.Keyring. Required unless
	// InsecurePlaintext.
	Keyring codec.KeySource
	// InsecurePlaintext lets a store without Keyring write tokens in plaintext: for development
	// only. Optional: default false.
	InsecurePlaintext bool
	// Now is the clock of pending consents' expiry. Optional: default time.Now.
	Now func() time.Time
}

var _ Store = (*SQLStore)(nil)

// schemaLockKey is the advisory lock EnsureSchema holds: concurrent CREATE ... IF NOT EXISTS of
// one table can fail on PostgreSQL's catalog.
const schemaLockKey = 0x746f6f6c67617465 // "toolgate"

// schema is the stores' tables: scopes and waiters are JSON arrays, key_id "" marks a row in
// plaintext.
var schema = []string{
	`CREATE TABLE IF NOT EXISTS toolgate_credential_tokens (
		principal   text        NOT NULL,
		provider    text        NOT NULL,
		scopes      text        NOT NULL,
		expiry      timestamptz,
		obtained    timestamptz NOT NULL,
		refreshable boolean     NOT NULL,
		key_id      text        NOT NULL,
		sealed      bytea       NOT NULL,
		updated     timestamptz NOT NULL DEFAULT now(),
		PRIMARY KEY (principal, provider)
	)`,
	`CREATE TABLE IF NOT EXISTS toolgate_credential_pending (
		state     text        PRIMARY KEY,
		principal text        NOT NULL,
		provider  text        NOT NULL,
		scopes    text        NOT NULL,
		waiters   text        NOT NULL,
		expires   timestamptz NOT NULL,
		key_id    text        NOT NULL,
		sealed    bytea       NOT NULL
	)`,
	`CREATE INDEX IF NOT EXISTS toolgate_credential_pending_owner ON toolgate_credential_pending (principal, provider)`,
}

// EnsureSchema creates the store's tables when missing; concurrent calls are safe. It refuses a
// store with neither Keyring nor InsecurePlaintext.
func (s *SQLStore) EnsureSchema(ctx context.Context) error {
	if err := s.check(); err != nil {
		return err
	}
	return s.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(schemaLockKey)); err != nil {
			return fmt.Errorf("lock schema: %w", err)
		}
		for _, stmt := range schema {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("create credentials schema: %w", err)
			}
		}
		return nil
	})
}

func (s *SQLStore) check() error {
	if s.DB == nil {
		return errors.New("credentials SQL store: no database")
	}
	return s.sealer().check()
}

func (s *SQLStore) sealer() sealer {
	return sealer{keys: s.Keyring, plaintext: s.InsecurePlaintext}
}

func (s *SQLStore) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *SQLStore) ready(principal, provider string) error {
	if err := s.check(); err != nil {
		return err
	}
	return checkKey(principal, provider)
}

// queryer is what both *sql.DB and *sql.Tx query with.
type queryer interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Get returns the principal's token at provider.
func (s *SQLStore) Get(ctx context.Context, principal, provider string) (Token, bool, error) {
	if err := s.ready(principal, provider); err != nil {
		return Token{}, false, err
	}
	return s.read(ctx, s.DB, principal, provider)
}

func (s *SQLStore) read(ctx context.Context, q queryer, principal, provider string) (Token, bool, error) {
	var keyID string
	var sealed []byte
	err := q.QueryRowContext(ctx, `SELECT key_id, sealed FROM toolgate_credential_tokens WHERE principal = $1 AND provider = $2`,
		principal, provider).Scan(&keyID, &sealed)
	if errors.Is(err, sql.ErrNoRows) {
		return Token{}, false, nil
	}
	if err != nil {
		return Token{}, false, fmt.Errorf("read token: %w", err)
	}
	t, err := s.sealer().openToken(principal, provider, keyID, sealed)
	if err != nil {
		return Token{}, false, fmt.Errorf("token of %q at %q: %w", principal, provider, err)
	}
	return t, true, nil
}

// Put stores the principal's token at provider, under the token's lock.
func (s *SQLStore) Put(ctx context.Context, principal, provider string, t Token) error {
	_, err := s.Update(ctx, principal, provider, func(Token, bool) (Token, bool, error) { return t, true, nil })
	return err
}

// Delete removes the principal's token at provider, under the token's lock (after a refresh
// under way).
func (s *SQLStore) Delete(ctx context.Context, principal, provider string) (found bool, err error) {
	if err := s.ready(principal, provider); err != nil {
		return false, err
	}
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		if err := lockToken(ctx, tx, principal, provider); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM toolgate_credential_tokens WHERE principal = $1 AND provider = $2`, principal, provider)
		if err != nil {
			return fmt.Errorf("delete token: %w", err)
		}
		n, err := res.RowsAffected()
		found = n > 0
		return err
	})
	return found, err
}

// List returns every token's Entry, sorted by principal and provider; it opens no token.
func (s *SQLStore) List(ctx context.Context) ([]Entry, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	rows, err := s.DB.QueryContext(ctx, `SELECT principal, provider, scopes, expiry, obtained, refreshable, key_id FROM toolgate_credential_tokens`)
	if err != nil {
		return nil, fmt.Errorf("list tokens: %w", err)
	}
	defer rows.Close()
	var entries []Entry
	for rows.Next() {
		var e Entry
		var scopes string
		var expiry sql.NullTime
		if err := rows.Scan(&e.Principal, &e.Provider, &scopes, &expiry, &e.Obtained, &e.Refreshable, &e.KeyID); err != nil {
			return nil, fmt.Errorf("list tokens: %w", err)
		}
		if err := json.Unmarshal([]byte(scopes), &e.Scopes); err != nil {
			return nil, fmt.Errorf("list tokens: scopes of %q at %q: %w", e.Principal, e.Provider, err)
		}
		e.Scopes = nilIfEmpty(e.Scopes)
		if expiry.Valid {
			e.Expiry = expiry.Time.UTC()
		}
		e.Obtained = e.Obtained.UTC()
		entries = append(entries, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list tokens: %w", err)
	}
	sortEntries(entries)
	return entries, nil
}

// Update runs fn on the principal's token at provider in a transaction holding the token's
// advisory lock.
func (s *SQLStore) Update(ctx context.Context, principal, provider string, fn func(t Token, found bool) (Token, bool, error)) (Token, error) {
	if err := s.ready(principal, provider); err != nil {
		return Token{}, err
	}
	var next Token
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		if err := lockToken(ctx, tx, principal, provider); err != nil {
			return err
		}
		t, found, err := s.read(ctx, tx, principal, provider)
		if err != nil {
			return err
		}
		var store bool
		next, store, err = fn(t, found)
		if err != nil || !store {
			return err
		}
		keyID, sealed, err := s.sealer().sealToken(principal, provider, next)
		if err != nil {
			return err
		}
		e := entryOf(principal, provider, keyID, next)
		scopes, err := jsonArray(e.Scopes)
		if err != nil {
			return err
		}
		var expiry sql.NullTime
		if !e.Expiry.IsZero() {
			expiry = sql.NullTime{Time: e.Expiry, Valid: true}
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO toolgate_credential_tokens
			(principal, provider, scopes, expiry, obtained, refreshable, key_id, sealed, updated)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, now())
			ON CONFLICT (principal, provider) DO UPDATE SET scopes = $3, expiry = $4, obtained = $5,
				refreshable = $6, key_id = $7, sealed = $8, updated = now()`,
			principal, provider, scopes, expiry, e.Obtained, e.Refreshable, keyID, sealed)
		if err != nil {
			return fmt.Errorf("store token: %w", err)
		}
		return nil
	})
	if err != nil {
		return Token{}, err
	}
	return next, nil
}

// lockToken holds the token's advisory lock until tx ends.
func lockToken(ctx context.Context, tx *sql.Tx, principal, provider string) error {
	sum := sha256.Sum256(rowAAD("lock", principal, provider))
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(binary.BigEndian.Uint64(sum[:8]))); err != nil {
		return fmt.Errorf("lock token: %w", err)
	}
	return nil
}

// inTx runs fn in a transaction, committed when fn returns nil.
func (s *SQLStore) inTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := s.DB.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// PutPending records p, and removes pending consents expired longer than a day.
func (s *SQLStore) PutPending(ctx context.Context, p Pending) error {
	if err := s.ready(p.Principal, p.Provider); err != nil {
		return err
	}
	if err := checkPending(p); err != nil {
		return err
	}
	keyID, sealed, err := s.sealer().sealVerifier(p)
	if err != nil {
		return err
	}
	scopes, err := jsonArray(p.Scopes)
	if err != nil {
		return err
	}
	waiters, err := jsonArray(p.Waiters)
	if err != nil {
		return err
	}
	_, err = s.DB.ExecContext(ctx, `INSERT INTO toolgate_credential_pending
		(state, principal, provider, scopes, waiters, expires, key_id, sealed)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
		ON CONFLICT (state) DO UPDATE SET principal = $2, provider = $3, scopes = $4, waiters = $5,
			expires = $6, key_id = $7, sealed = $8`,
		p.State, p.Principal, p.Provider, scopes, waiters, p.Expires.UTC(), keyID, sealed)
	if err != nil {
		return fmt.Errorf("store pending consent: %w", err)
	}
	if _, err := s.DB.ExecContext(ctx, `DELETE FROM toolgate_credential_pending WHERE expires < $1`, s.now().Add(-pendingRetention)); err != nil {
		return fmt.Errorf("remove expired pending consents: %w", err)
	}
	return nil
}

// pendingColumns are the columns scanPending reads, in its order.
const pendingColumns = `state, principal, provider, scopes, waiters, expires, key_id, sealed`

// TakePending removes and returns the pending consent of state (one DELETE ... RETURNING); an
// expired one is not found and stays for TakeWaiting.
func (s *SQLStore) TakePending(ctx context.Context, state string) (Pending, bool, error) {
	if err := s.check(); err != nil {
		return Pending{}, false, err
	}
	if err := checkState(state); err != nil {
		return Pending{}, false, err
	}
	// An expired consent stays for TakeWaiting: its calls still wait for a consent.
	rows, err := s.DB.QueryContext(ctx, `DELETE FROM toolgate_credential_pending WHERE state = $1 AND expires > $2 RETURNING `+pendingColumns,
		state, s.now())
	if err != nil {
		return Pending{}, false, fmt.Errorf("take pending consent: %w", err)
	}
	taken, err := s.scanPending(rows)
	if err != nil || len(taken) == 0 {
		return Pending{}, false, err
	}
	return taken[0], true, nil
}

// TakeWaiting removes and returns every pending consent of principal at provider, expired ones
// too (their calls may still wait), sorted by expiry.
func (s *SQLStore) TakeWaiting(ctx context.Context, principal, provider string) ([]Pending, error) {
	if err := s.ready(principal, provider); err != nil {
		return nil, err
	}
	rows, err := s.DB.QueryContext(ctx, `DELETE FROM toolgate_credential_pending WHERE principal = $1 AND provider = $2 RETURNING `+pendingColumns,
		principal, provider)
	if err != nil {
		return nil, fmt.Errorf("take waiting consents: %w", err)
	}
	out, err := s.scanPending(rows)
	if err != nil {
		return nil, err
	}
	sortPending(out)
	return out, nil
}

// scanPending reads and closes rows of pendingColumns, opening each verifier.
func (s *SQLStore) scanPending(rows *sql.Rows) ([]Pending, error) {
	defer rows.Close()
	var out []Pending
	for rows.Next() {
		var p Pending
		var scopes, waiters, keyID string
		var sealed []byte
		if err := rows.Scan(&p.State, &p.Principal, &p.Provider, &scopes, &waiters, &p.Expires, &keyID, &sealed); err != nil {
			return nil, fmt.Errorf("read pending consent: %w", err)
		}
		if err := json.Unmarshal([]byte(scopes), &p.Scopes); err != nil {
			return nil, fmt.Errorf("read pending consent: scopes: %w", err)
		}
		if err := json.Unmarshal([]byte(waiters), &p.Waiters); err != nil {
			return nil, fmt.Errorf("read pending consent: waiters: %w", err)
		}
		p.Scopes, p.Waiters, p.Expires = nilIfEmpty(p.Scopes), nilIfEmpty(p.Waiters), p.Expires.UTC()
		v, err := s.sealer().openVerifier(p, keyID, sealed)
		if err != nil {
			return nil, fmt.Errorf("pending consent of %q at %q: %w", p.Principal, p.Provider, err)
		}
		p.Verifier = v
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read pending consent: %w", err)
	}
	return out, nil
}

// jsonArray is the JSON of list, "[]" when empty.
func jsonArray(list []string) (string, error) {
	if list == nil {
		list = []string{}
	}
	b, err := json.Marshal(list)
	if err != nil {
		return "", err
	}
	return string(b), nil
}
