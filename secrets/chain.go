package secrets

import (
	"context"
	"errors"
	"fmt"

	"github.com/toolgate/toolgate/toolcore"
)

// Chain returns a source that asks sources in order: the first that has the name answers. A
// source's error other than toolcore.ErrSecretNotFound (a directory it cannot read, a secret
// manager it cannot reach) ends the lookup: a later source must not answer with what may be a
// stale value. Nil sources are skipped.
func Chain(sources ...toolcore.SecretSource) toolcore.SecretSource {
	return chain(append([]toolcore.SecretSource(nil), sources...))
}

type chain []toolcore.SecretSource

func (c chain) Secret(ctx context.Context, name string) (string, error) {
	for _, src := range c {
		if src == nil {
			continue
		}
		v, err := src.Secret(ctx, name)
		if err == nil {
			return v, nil
		}
		if !errors.Is(err, toolcore.ErrSecretNotFound) {
			return "", err
		}
	}
	return "", fmt.Errorf("secret %q: %w", name, toolcore.ErrSecretNotFound)
}

// Map is a source holding its values in memory, by name: for tests, and for a program that
// gets its secrets some other way.
type Map map[string]string

// Secret returns m[name], or an error wrapping toolcore.ErrSecretNotFound.
func (m Map) Secret(_ context.Context, name string) (string, error) {
	v, ok := m[name]
	if !ok {
		return "", fmt.Errorf("secret %q: %w", name, toolcore.ErrSecretNotFound)
	}
	return v, nil
}
