package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"os"
	"path/filepath"
	"strings"

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
type partStoreFlags struct{ storeFlags }

// addPartStoreFlags adds --part-store and --part-store-postgres-file to cmd; defaultNote says
// what an unset store means for the command.
func addPartStoreFlags(cmd *cobra.Command, a *app, f *partStoreFlags, defaultNote string) {
	f.what, f.dirFlag, f.pgFlag, f.postgresEnv = "part store", "part-store", "part-store-postgres-file", partStorePostgresEnv
	f.add(cmd, a, "TOOLGATE_PART_STORE",
		"keep the parts of rich results (images, audio, resources, long texts) in this directory, each encrypted with --codec-key's keys when given "+defaultNote,
		"keep the parts of rich results in PostgreSQL")
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
		db, err := f.openDB(dsn)
		if err != nil {
			return nil, nil, err
		}
		store := &blobs.SQLStore{DB: db}
		if err := store.EnsureSchema(ctx); err != nil {
			db.Close()
			return nil, nil, fmt.Errorf("part store: %w", err)
		}
		return seal(store), db, nil
	}
	dir, closer, err := f.directory("toolgate-parts-")
	if err != nil || dir == "" {
		return nil, closer, err
	}
	return seal(&blobs.FileStore{Dir: dir}), closer, nil
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
