package secrets

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/toolgate/toolgate/toolcore"
)

// Env resolves a secret from the worker's environment: the name "api_key" is the variable
// Prefix+"API_KEY" (upper-cased, '.' and '-' become '_'). It reads the variable at each call, so
// a new value needs a restart of the worker (Dir sees rotated files without one). A variable that
// is set to "" is found, empty (toolcore.ResolveSecrets refuses an empty value, naming it).
type Env struct {
	// Prefix starts the name of every variable Env reads, such as "TOOLGATE_SECRET_": a tool
	// can then read no other variable of the worker (TEMPORAL_API_KEY, AWS_SECRET_ACCESS_KEY).
	// It must match ^[A-Za-z_][A-Za-z0-9_]*$. Required.
	Prefix string
	// LookupEnv reads a variable. Optional: default os.LookupEnv.
	LookupEnv func(string) (string, bool)
}

// ErrNoPrefix is Env's error when its Prefix is empty.
var ErrNoPrefix = errors.New("secrets.Env needs a Prefix: without one a tool could read any variable of the worker")

// Variable returns the environment variable that holds the secret name.
func (e Env) Variable(name string) string {
	up := strings.ToUpper(name)
	return e.Prefix + strings.NewReplacer(".", "_", "-", "_").Replace(up)
}

// Check returns why Prefix is not usable (empty, or not ^[A-Za-z_][A-Za-z0-9_]*$), or nil:
// Secret fails for every name while it is not.
func (e Env) Check() error { return checkPrefix(e.Prefix) }

// Secret returns the value of the variable Variable(name), or an error wrapping
// toolcore.ErrSecretNotFound when it is not set.
func (e Env) Secret(_ context.Context, name string) (string, error) {
	if err := e.Check(); err != nil {
		return "", err
	}
	if err := toolcore.CheckSecretName(name); err != nil {
		return "", err
	}
	lookup := e.LookupEnv
	if lookup == nil {
		lookup = os.LookupEnv
	}
	v, ok := lookup(e.Variable(name))
	if !ok {
		return "", fmt.Errorf("secret %q: variable %s is not set: %w", name, e.Variable(name), toolcore.ErrSecretNotFound)
	}
	return v, nil
}

// checkPrefix enforces ^[A-Za-z_][A-Za-z0-9_]*$.
func checkPrefix(p string) error {
	if p == "" {
		return ErrNoPrefix
	}
	for i := 0; i < len(p); i++ {
		c := p[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c == '_' || i > 0 && c >= '0' && c <= '9') {
			return fmt.Errorf("secrets.Env prefix %q must match ^[A-Za-z_][A-Za-z0-9_]*$", p)
		}
	}
	return nil
}
