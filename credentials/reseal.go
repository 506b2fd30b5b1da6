package credentials

import (
	"context"
	"errors"
	"fmt"
)

// Reseal rewrites every token of s that a key other than currentKeyID seals (or that is stored in
// plaintext), so it is sealed with the store's current key: the last step of a key rotation,
// before the old key leaves the key file. Each rewrite is an Update, so it waits for a refresh
// under way. It goes on past a token it cannot open (one sealed with a key the store lacks, or a
// plaintext row a keyed store refuses) and returns how many it rewrote with every failure joined.
func Reseal(ctx context.Context, s Store, currentKeyID string) (resealed int, err error) {
	entries, err := s.List(ctx)
	if err != nil {
		return 0, err
	}
	var errs []error
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return resealed, errors.Join(append(errs, err)...)
		}
		if e.KeyID == currentKeyID {
			continue
		}
		rewritten := false
		_, err := s.Update(ctx, e.Principal, e.Provider, func(t Token, found bool) (Token, bool, error) {
			rewritten = found // deleted since List: nothing to rewrite
			return t, found, nil
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("reseal %q at %q: %w", e.Principal, e.Provider, err))
			continue
		}
		if rewritten {
			resealed++
		}
	}
	return resealed, errors.Join(errs...)
}
