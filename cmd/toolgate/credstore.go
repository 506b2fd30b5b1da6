package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/toolgate/toolgate/codec"
	"github.com/toolgate/toolgate/credentials"
)

// credentialsPostgresEnv holds the credential store's PostgreSQL DSN itself (a DSN with a
// password never goes in argv).
const credentialsPostgresEnv = "TOOLGATE_CREDENTIALS_POSTGRES"

// maxDSNFileBytes bounds what --credentials-postgres-file reads.
const maxDSNFileBytes = 64 << 10

// credentialStoreUse says which command the store flags are for.
type credentialStoreUse int

const (
	_ credentialStoreUse = iota
	// credentialStoreWorker: toolgate worker (no default store: a directory or PostgreSQL must be
	// named).
	credentialStoreWorker
	// credentialStoreDev: toolgate dev (default: a directory under the data directory;
	// --credentials-insecure-plaintext allowed).
	credentialStoreDev
	// credentialStoreAdmin: toolgate credentials list|revoke (no token is opened: no key needed).
	credentialStoreAdmin
)

// credentialStoreFlags pick where the per-user OAuth tokens (credentials.Store) are kept: a
// directory (credentials.FileStore) or PostgreSQL (credentials.SQLStore).
type credentialStoreFlags struct {
	storeFlags
	use       credentialStoreUse
	plaintext bool
}

// addCredentialStoreFlags adds --credentials-dir, --credentials-postgres-file and, for dev,
// --credentials-insecure-plaintext to cmd.
func addCredentialStoreFlags(cmd *cobra.Command, a *app, f *credentialStoreFlags, use credentialStoreUse) {
	f.use = use
	f.what, f.dirFlag, f.pgFlag, f.postgresEnv = "credentials store", "credentials-dir", "credentials-postgres-file", credentialsPostgresEnv
	dirUsage := "keep per-user OAuth tokens in this directory (mode 0700, each token encrypted with --codec-key's keys)"
	switch use {
	case credentialStoreDev:
		dirUsage += " (default <data-dir>/credentials)"
	case credentialStoreAdmin:
		dirUsage = "the credentials store's directory (default toolgate dev's: $TOOLGATE_DATA_DIR/credentials, else ~/.local/share/toolgate/credentials)"
	}
	f.add(cmd, a, "TOOLGATE_CREDENTIALS_DIR", dirUsage, "keep per-user OAuth tokens in PostgreSQL")
	if use == credentialStoreDev {
		cmd.Flags().BoolVar(&f.plaintext, "credentials-insecure-plaintext", false, "without --codec-key, store OAuth tokens unencrypted (development only; toolgate credentials list marks them)")
	}
}

// storeDSN is the PostgreSQL DSN a store's flags pick: the one line of file (flag names the file's
// flag, for messages), else $env unless the store's directory flag was set (dirSet), else "".
func storeDSN(flag, file string, dirSet func() bool, env string, lookupEnv func(string) (string, bool)) (string, error) {
	if file != "" {
		f, err := os.Open(file)
		if err != nil {
			return "", badInput(fmt.Errorf("%s: %w", flag, err))
		}
		defer f.Close()
		data, err := io.ReadAll(io.LimitReader(f, maxDSNFileBytes+1))
		if err != nil {
			return "", badInput(fmt.Errorf("%s: %w", flag, err))
		}
		dsn := strings.TrimSpace(string(data))
		if dsn == "" || len(data) > maxDSNFileBytes {
			return "", badInput(fmt.Errorf("%s %s: want one DSN of at most %d bytes", flag, file, maxDSNFileBytes))
		}
		return dsn, nil
	}
	if dirSet != nil && dirSet() {
		return "", nil
	}
	if lookupEnv == nil {
		lookupEnv = os.LookupEnv
	}
	dsn, _ := lookupEnv(env)
	return strings.TrimSpace(dsn), nil
}

// nopCloser closes nothing.
type nopCloser struct{}

func (nopCloser) Close() error { return nil }

// closerFunc is a Closer calling itself.
type closerFunc func() error

func (c closerFunc) Close() error { return c() }

// openCredentialStore opens the token store the flags pick: PostgreSQL (its tables created when
// missing) when a DSN is given, else the directory of --credentials-dir or DefaultDir. keys seal
// the tokens (the command's --codec-key keyring or watcher); a store without keys is refused
// unless --credentials-insecure-plaintext (dev) says plaintext, except for list and revoke, which
// open no token. Close the Closer when done (it closes the database, or removes dev
// --in-memory's temporary directory).
func openCredentialStore(ctx context.Context, f *credentialStoreFlags, keys codec.KeySource) (credentials.Store, io.Closer, error) {
	// list and revoke read no token: InsecurePlaintext only lets them open a store without keys.
	plaintext := f.plaintext || (keys == nil && f.use == credentialStoreAdmin)
	if keys == nil && !plaintext {
		flag := ""
		if f.use == credentialStoreDev {
			flag = ", or --credentials-insecure-plaintext for development"
		}
		return nil, nil, badInput(fmt.Errorf("per-user OAuth tokens are stored encrypted: give --codec-key%s", flag))
	}
	dsn, err := f.postgresDSN()
	if err != nil {
		return nil, nil, err
	}
	if dsn != "" {
		db, err := f.openDB(dsn)
		if err != nil {
			return nil, nil, err
		}
		store := &credentials.SQLStore{DB: db, Keyring: keys, InsecurePlaintext: plaintext}
		if err := store.EnsureSchema(ctx); err != nil {
			db.Close()
			return nil, nil, fmt.Errorf("credentials store on PostgreSQL: %w", err)
		}
		return store, db, nil
	}
	dir, closer, err := f.directory("toolgate-credentials-")
	if err != nil {
		return nil, nil, err
	}
	if dir == "" {
		return nil, nil, badInput(errors.New("no credentials store: give --credentials-dir DIR, or PostgreSQL with --credentials-postgres-file FILE or $" + credentialsPostgresEnv))
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	if f.use == credentialStoreAdmin {
		// list and revoke create nothing: a missing directory is a wrong one.
		if _, err := os.Stat(dir); err != nil {
			return nil, nil, badInput(fmt.Errorf("no credentials store at %s: %w", dir, errors.Unwrap(err)))
		}
	}
	store := &credentials.FileStore{Dir: dir, Keyring: keys, InsecurePlaintext: plaintext}
	if err := store.Init(); err != nil {
		_ = closer.Close()
		return nil, nil, badInput(err)
	}
	return store, closer, nil
}
