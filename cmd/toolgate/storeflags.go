package main

import (
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/lib/pq"
	"github.com/spf13/cobra"
)

// storeFlags pick where one of the CLI's stores keeps its data: a directory, or PostgreSQL with
// the DSN in a file (--<name>-postgres-file) or in the environment (a DSN with a password never
// goes in argv). The part store, the sandbox store and the credentials store are three.
type storeFlags struct {
	what        string // what the store is, in messages: "part store"
	dirFlag     string // the directory flag's name: "part-store"
	pgFlag      string // the DSN file flag's name: "part-store-postgres-file"
	postgresEnv string // the environment variable holding the DSN itself

	dir          string
	postgresFile string
	lookupEnv    func(string) (string, bool)
	dirSet       func() bool
	// DefaultDir is the directory used when neither the directory flag nor PostgreSQL is given
	// ("": none, or with InMemory a temporary directory).
	DefaultDir string
	// InMemory makes an unset DefaultDir a temporary directory removed at Close (toolgate dev
	// --in-memory).
	InMemory bool
	// OnlyExisting uses DefaultDir only when it exists (readers: result, mcp, the sandbox
	// commands).
	OnlyExisting bool
}

// add adds the directory flag (also read from dirEnv) and the DSN file flag to cmd, exclusive of
// each other.
func (f *storeFlags) add(cmd *cobra.Command, a *app, dirEnv, dirUsage, pgUsage string) {
	f.lookupEnv = a.lookupEnv
	flags := cmd.Flags()
	flags.StringVar(&f.dir, f.dirFlag, "", dirUsage)
	flags.StringVar(&f.postgresFile, f.pgFlag, "", pgUsage+": this file holds the DSN (postgres://user:password@host/db?sslmode=verify-full); or set the DSN in $"+f.postgresEnv)
	bindEnv(flags, f.dirFlag, dirEnv)
	cmd.MarkFlagsMutuallyExclusive(f.dirFlag, f.pgFlag)
	f.dirSet = func() bool { return flags.Changed(f.dirFlag) }
}

// postgresDSN is the DSN of the DSN file flag, else the environment's (unless the directory flag
// was given), else "".
func (f *storeFlags) postgresDSN() (string, error) {
	return storeDSN("--"+f.pgFlag, f.postgresFile, f.dirSet, f.postgresEnv, f.lookupEnv)
}

// openDB opens the database of dsn. Its error never echoes the DSN or the driver's parse error:
// either may hold the password.
func (f *storeFlags) openDB(dsn string) (*sql.DB, error) {
	connector, err := pq.NewConnector(dsn)
	if err != nil {
		return nil, badInput(errors.New(f.what + ": the PostgreSQL DSN is not valid (postgres://user:password@host:port/db?params, or key=value pairs)"))
	}
	return sql.OpenDB(connector), nil
}

// directory is the store's directory when no DSN is given: the directory flag, else DefaultDir
// (with OnlyExisting, only when it exists), else with InMemory a temporary directory named after
// pattern that the Closer removes; "" when none.
func (f *storeFlags) directory(pattern string) (string, io.Closer, error) {
	dir := f.dir
	if dir == "" {
		dir = f.DefaultDir
		if dir != "" && f.OnlyExisting {
			if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
				dir = ""
			}
		}
	}
	if dir == "" && f.InMemory {
		tmp, err := os.MkdirTemp("", pattern)
		if err != nil {
			return "", nil, fmt.Errorf("%s: %w", f.what, err)
		}
		return tmp, closerFunc(func() error { return os.RemoveAll(tmp) }), nil
	}
	return dir, nopCloser{}, nil
}
