package blobs

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// FileStore keeps each blob in a file named by its key in Dir (mode 0600; Dir 0700, created on
// first Put). A Put writes a temporary file and renames it, so a reader never sees half a blob.
// A blob's age is its file's modification time. For toolgate dev and single-machine workers.
type FileStore struct {
	// Dir is the directory. Required.
	Dir string
}

var _ Store = (*FileStore)(nil)

// tempPrefix marks files a Put is writing; Sweep removes old ones too.
const tempPrefix = ".put-"

func (s *FileStore) path(key string) (string, error) {
	if s.Dir == "" {
		return "", errors.New("blob file store: no directory")
	}
	if err := CheckKey(key); err != nil {
		return "", err
	}
	return filepath.Join(s.Dir, key), nil
}

// Put writes data under key.
func (s *FileStore) Put(ctx context.Context, key string, data []byte) error {
	path, err := s.path(key)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return fmt.Errorf("put blob: %w", err)
	}
	tmp, err := os.CreateTemp(s.Dir, tempPrefix+"*")
	if err != nil {
		return fmt.Errorf("put blob: %w", err)
	}
	defer os.Remove(tmp.Name()) // after the rename: no such file
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("put blob: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("put blob: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("put blob: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("put blob: %w", err)
	}
	return nil
}

// Get reads the blob under key.
func (s *FileStore) Get(ctx context.Context, key string) ([]byte, error) {
	path, err := s.path(key)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("blob %s: %w", key, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("get blob: %w", err)
	}
	return data, nil
}

// Delete removes the blob under key.
func (s *FileStore) Delete(_ context.Context, key string) error {
	path, err := s.path(key)
	if err != nil {
		return err
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("delete blob: %w", err)
	}
	return nil
}

var _ Lister = (*FileStore)(nil)

// List calls fn with each blob whose key starts with prefix and its modification time.
func (s *FileStore) List(ctx context.Context, prefix string, fn func(key string, stored time.Time) error) error {
	entries, err := os.ReadDir(s.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("list blobs: %w", err)
	}
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return err
		}
		name := e.Name()
		if !e.Type().IsRegular() || !strings.HasPrefix(name, prefix) || CheckKey(name) != nil {
			continue // not a blob (a Put's temporary file, or not ours)
		}
		info, err := e.Info()
		if errors.Is(err, fs.ErrNotExist) {
			continue // deleted meanwhile
		}
		if err != nil {
			return fmt.Errorf("list blobs: %w", err)
		}
		if err := fn(name, info.ModTime()); err != nil {
			return err
		}
	}
	return nil
}

// Sweep removes the blobs (and abandoned temporary files) modified before cutoff.
func (s *FileStore) Sweep(ctx context.Context, cutoff time.Time) (int, error) {
	entries, err := os.ReadDir(s.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("sweep blobs: %w", err)
	}
	removed := 0
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return removed, err
		}
		name := e.Name()
		if !e.Type().IsRegular() || (CheckKey(name) != nil && !strings.HasPrefix(name, tempPrefix)) {
			continue // not ours
		}
		info, err := e.Info()
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return removed, fmt.Errorf("sweep blobs: %w", err)
		}
		if !info.ModTime().Before(cutoff) {
			continue
		}
		if err := os.Remove(filepath.Join(s.Dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return removed, fmt.Errorf("sweep blobs: %w", err)
		}
		if !strings.HasPrefix(name, tempPrefix) {
			removed++
		}
	}
	return removed, nil
}
