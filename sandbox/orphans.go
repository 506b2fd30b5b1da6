package sandbox

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/toolgate/toolgate/blobs"
)

// OrphanGrace is how old an object no head refers to must be before Sweep deletes it: a commit
// stores its objects before it swaps the head, so a younger one may belong to a commit still
// under way.
const OrphanGrace = 24 * time.Hour

// sweepOrphans deletes the objects stored before now minus OrphanGrace that no workspace's head
// refers to (its manifest and its previous one, and their files): what a prune cut short by a
// lost worker, a losing commit that could not clean up, or a Remove that failed halfway left.
// A workspace whose head's manifest cannot be read keeps all its objects. Only a store that
// lists its objects (blobs.Lister) is swept; it returns how many objects it deleted.
func (w *Workspaces) sweepOrphans(ctx context.Context, now time.Time) (int, error) {
	lister, ok := w.cfg.Store.Objects.(blobs.Lister)
	if !ok {
		return 0, nil
	}
	heads, err := w.cfg.Store.Heads.List(ctx)
	if err != nil {
		return 0, err
	}
	keep := map[string]bool{}
	unsure := map[string]bool{} // key prefixes of workspaces whose references are unknown
	for _, h := range heads {
		for _, sum := range []string{h.Manifest, h.Prev} {
			if sum == "" {
				continue
			}
			keep[manifestKey(h.Workspace, sum)] = true
			entries, err := loadManifest(ctx, w.cfg.Store.Objects, h.Workspace, sum, w.cfg.MaxBytes)
			if err != nil {
				if ctx.Err() != nil {
					return 0, ctx.Err()
				}
				if sum == h.Manifest || !errors.Is(err, blobs.ErrNotFound) {
					unsure[keyPrefix(h.Workspace)] = true
				}
				continue
			}
			for _, e := range entries {
				if e.kind() == 0 {
					keep[fileKey(h.Workspace, e)] = true
				}
			}
		}
	}
	cutoff := now.Add(-OrphanGrace)
	var orphans []string
	err = lister.List(ctx, "ws", func(key string, stored time.Time) error {
		ours := len(key) > keyPrefixLen && (key[keyPrefixLen] == '-' || key[keyPrefixLen] == '_')
		if ours && !keep[key] && stored.Before(cutoff) && !unsure[key[:keyPrefixLen]] {
			orphans = append(orphans, key)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	for i, key := range orphans {
		if err := w.cfg.Store.Objects.Delete(ctx, key); err != nil {
			return i, fmt.Errorf("delete object %s: %w", key, err)
		}
	}
	return len(orphans), nil
}
