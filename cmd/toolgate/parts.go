package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"os"
	"path/filepath"
	"strings"

	"github.com/lib/pq"
	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"github.com/toolgate/toolgate/blobs"
	"github.com/toolgate/toolgate/codec"
	"github.com/toolgate/toolgate/toolcore"
)

// partStorePostgresEnv holds the part store's PostgreSQL DSN itself (a DSN with a password never
// goes in argv).
const partStorePostgresEnv = "TOOLGATE_PART_STORE_POSTGRES"

// partStoreFlags pick where the parts of rich results are kept (blobs.Store): a directory
// (blobs.FileStore) or PostgreSQL (blobs.SQLStore), sealed with --codec-key's keys when given.
type partStoreFlags struct {
	dir          string
	postgresFile string
	lookupEnv    func(string) (string, bool)
	dirSet       func() bool
	// DefaultDir is the directory used when neither --part-store nor PostgreSQL is given; ""
	// is no store (or, with InMemory, a temporary directory removed at Close).
	DefaultDir string
	// InMemory makes an unset DefaultDir a temporary directory (toolgate dev --in-memory).
	InMemory bool
	// OnlyExisting uses DefaultDir only when it exists (readers: result, mcp).
	OnlyExisting bool
}

// addPartStoreFlags adds --part-store and --part-store-postgres-file to cmd; defaultNote says
// what an unset store means for the command.
func addPartStoreFlags(cmd *cobra.Command, a *app, f *partStoreFlags, defaultNote string) {
	f.lookupEnv = a.lookupEnv
	fs := cmd.Flags()
	fs.StringVar(&f.dir, "part-store", "", "keep the parts of rich results (images, audio, resources, long texts) in this directory, each encrypted with --codec-key's keys when given "+defaultNote)
	fs.StringVar(&f.postgresFile, "part-store-postgres-file", "", "keep the parts of rich results in PostgreSQL: this file holds the DSN (postgres://user:password@host/db?sslmode=verify-full); or set the DSN in $"+partStorePostgresEnv)
	bindEnv(fs, "part-store", "TOOLGATE_PART_STORE")
	cmd.MarkFlagsMutuallyExclusive("part-store", "part-store-postgres-file")
	f.dirSet = func() bool { return fs.Changed("part-store") }
}

// configured reports whether the flags name a store (a directory, a DSN file, or a DSN in
// $TOOLGATE_PART_STORE_POSTGRES), so mounted MCP servers' binary contents can be kept as parts.
func (f *partStoreFlags) configured() bool {
	if f.dir != "" || f.postgresFile != "" || f.DefaultDir != "" || f.InMemory {
		return true
	}
	dsn, err := f.postgresDSN()
	return err == nil && dsn != ""
}

// devPartStoreDir is toolgate dev's part store under its data directory.
func devPartStoreDir(dataDir string) string { return filepath.Join(dataDir, "parts") }

// readerPartStoreDir is the store a reader (result, mcp) defaults to: toolgate dev's, under
// $TOOLGATE_DATA_DIR or the default data directory.
func readerPartStoreDir(lookupEnv func(string) (string, bool)) string {
	if dir, ok := lookupEnv("TOOLGATE_DATA_DIR"); ok && dir != "" {
		return devPartStoreDir(dir)
	}
	return devPartStoreDir(defaultDataDir(lookupEnv))
}

// postgresDSN is the DSN of --part-store-postgres-file, else $TOOLGATE_PART_STORE_POSTGRES
// (unless --part-store was given), else "".
func (f *partStoreFlags) postgresDSN() (string, error) {
	return storeDSN("--part-store-postgres-file", f.postgresFile, f.dirSet, partStorePostgresEnv, f.lookupEnv)
}

// open opens the store the flags pick, sealed with keys when not nil: PostgreSQL (its table
// created when missing) when a DSN is given, else --part-store or DefaultDir; nil when none.
// Close the Closer when done.
func (f *partStoreFlags) open(ctx context.Context, keys codec.KeySource) (blobs.Store, io.Closer, error) {
	seal := func(s blobs.Store) blobs.Store {
		if keys == nil {
			return s
		}
		return &blobs.Sealed{Store: s, Keys: keys}
	}
	dsn, err := f.postgresDSN()
	if err != nil {
		return nil, nil, err
	}
	if dsn != "" {
		connector, err := pq.NewConnector(dsn)
		if err != nil {
			// Never echo the DSN or the driver's parse error: either may hold the password.
			return nil, nil, badInput(errors.New("part store: the PostgreSQL DSN is not valid (postgres://user:password@host:port/db?params, or key=value pairs)"))
		}
		db := sql.OpenDB(connector)
		store := &blobs.SQLStore{DB: db}
		if err := store.EnsureSchema(ctx); err != nil {
			db.Close()
			return nil, nil, fmt.Errorf("part store: %w", err)
		}
		return seal(store), db, nil
	}
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
		tmp, err := os.MkdirTemp("", "toolgate-parts-")
		if err != nil {
			return nil, nil, fmt.Errorf("part store: %w", err)
		}
		return seal(&blobs.FileStore{Dir: tmp}), closerFunc(func() error { return os.RemoveAll(tmp) }), nil
	}
	if dir == "" {
		return nil, nopCloser{}, nil
	}
	return seal(&blobs.FileStore{Dir: dir}), nopCloser{}, nil
}

// writeParts writes the bytes of each part of res to dir (created 0700 when missing) as
// part-<index><extension> (mode 0600; the extension from the mimeType), checked against its claim,
// and logs each; a resource link has no bytes and is skipped. A part that cannot be read fails
// the command after the others are written.
func writeParts(ctx context.Context, logger *zap.Logger, store blobs.Store, res toolcore.Result, dir string) error {
	parts := res.Parts()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("--parts: %w", err)
	}
	var errs []error
	for i, c := range parts {
		if c.Type == toolcore.PartResourceLink {
			logger.Info("part is a link; nothing to write", zap.Int("part", i), zap.String("uri", c.URI))
			continue
		}
		data, err := blobs.Load(ctx, store, c)
		if err != nil {
			errs = append(errs, fmt.Errorf("part %d (%s, %d bytes): %w", i, c.Type, c.Size, err))
			continue
		}
		path := filepath.Join(dir, fmt.Sprintf("part-%d%s", i, partExtension(c.MimeType)))
		if err := os.WriteFile(path, data, 0o600); err != nil {
			errs = append(errs, fmt.Errorf("part %d: %w", i, err))
			continue
		}
		logger.Info("part written", zap.Int("part", i), zap.String("type", string(c.Type)), zap.String("mimeType", c.MimeType),
			zap.Int64("size", c.Size), zap.String("sha256", c.SHA256), zap.String("file", path))
	}
	if err := errors.Join(errs...); err != nil {
		return &exitError{code: ExitFailure, err: fmt.Errorf("write parts: %w", err)}
	}
	return nil
}

// partExtension is a file extension for mimeType ("" when none is known).
func partExtension(mimeType string) string {
	mt, _, _ := strings.Cut(mimeType, ";")
	switch strings.TrimSpace(mt) {
	case "":
		return ""
	case "text/plain":
		return ".txt"
	case "image/jpeg":
		return ".jpg"
	}
	exts, err := mime.ExtensionsByType(mt)
	if err != nil || len(exts) == 0 {
		return ""
	}
	return exts[0]
}
