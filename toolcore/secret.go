package toolcore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// SecretSource resolves a secret's name to its value on the worker that runs the tool: an
// environment, mounted files, a secret manager (package secrets has the first two). Values never
// reach workflow code, arguments, history, search attributes or logs: the executor resolves the
// names a tool declares (Options.Secrets) when an attempt starts, hands them to the tool through
// Secret, and redacts every resolved value from what the attempt reports (Secrets.Redact).
type SecretSource interface {
	// Secret returns name's value, or an error wrapping ErrSecretNotFound when the source has
	// none. Other errors (a secret manager that cannot be reached) are reported by name only:
	// their text may not reach a result.
	Secret(ctx context.Context, name string) (string, error)
}

// ErrSecretNotFound is wrapped by a SecretSource that has no value for a name.
var ErrSecretNotFound = errors.New("secret not found")

// Bounds of secrets.
const (
	// MaxSecretNameBytes bounds a secret's name (^[A-Za-z0-9_.-]{1,128}$).
	MaxSecretNameBytes = 128
	// MaxToolSecrets bounds the secrets one tool declares.
	MaxToolSecrets = 32
	// MinSecretBytes is the shortest value a secret may have: redacting a shorter one from
	// every text an attempt reports would mangle ordinary words.
	MinSecretBytes = 8
	// MaxSecretBytes bounds a secret's value.
	MaxSecretBytes = 64 << 10
)

// CheckSecretName enforces ^[A-Za-z0-9_.-]{1,128}$: a secret's name is shown in model-visible
// messages and redaction markers, so it carries no markup.
func CheckSecretName(name string) error {
	ok := name != "" && len(name) <= MaxSecretNameBytes
	for i := 0; ok && i < len(name); i++ {
		c := name[i]
		ok = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-'
	}
	if !ok {
		return fmt.Errorf("secret name %s must match ^[A-Za-z0-9_.-]{1,128}$", quoteShort(name))
	}
	return nil
}

// checkSecretNames checks Options.Secrets: valid, unique names, at most MaxToolSecrets.
func checkSecretNames(names []string) error {
	if len(names) > MaxToolSecrets {
		return fmt.Errorf("option Secrets names %d secrets, at most %d", len(names), MaxToolSecrets)
	}
	for i, n := range names {
		if err := CheckSecretName(n); err != nil {
			return fmt.Errorf("option Secrets: %w", err)
		}
		if slices.Contains(names[:i], n) {
			return fmt.Errorf("option Secrets names %q twice", n)
		}
	}
	return nil
}

// checkCredentials checks Options.Credentials: named providers, each once, scopes without space.
func checkCredentials(cs []Credential) error {
	if len(cs) > MaxToolSecrets {
		return fmt.Errorf("option Credentials names %d providers, at most %d", len(cs), MaxToolSecrets)
	}
	for i, c := range cs {
		if err := CheckSecretName(c.Provider); err != nil {
			return fmt.Errorf("option Credentials: provider: %w", err)
		}
		if slices.ContainsFunc(cs[:i], func(d Credential) bool { return d.Provider == c.Provider }) {
			return fmt.Errorf("option Credentials names provider %q twice", c.Provider)
		}
		for _, sc := range c.Scopes {
			if sc == "" || len(sc) > MaxSecretNameBytes || strings.ContainsFunc(sc, func(r rune) bool { return r <= ' ' || r == '"' || r == '\\' || r >= 0x7f }) {
				return fmt.Errorf("option Credentials: provider %q: scope %s must be 1 to 128 printable ASCII characters without space, quote or backslash", c.Provider, quoteShort(sc))
			}
		}
	}
	return nil
}

// SecretError is why an attempt could not get a secret or credential it declared; the attempt
// then does not run the tool. Its text names the secret, never a value, and is model-safe.
type SecretError struct {
	// Name is the secret's name (or "oauth:<provider>" for a credential).
	Name string
	// Reason is a fixed, model-safe text: "is not set on the worker", ...
	Reason string
	// Err is the source's error, for logs of the worker only (its text may hold anything).
	Err error
}

// Error returns `secret "NAME" <reason>`.
func (e *SecretError) Error() string { return "secret " + `"` + e.Name + `" ` + e.Reason }

// Unwrap returns the source's error.
func (e *SecretError) Unwrap() error { return e.Err }

// Secrets are the values an executor resolved for one attempt: the tool's declared secrets and
// the access tokens of its credentials. Secret and AccessToken hand them to the tool; Redact
// replaces each of them in every text the attempt reports. The zero value holds none; a nil
// *Secrets is valid and redacts nothing.
type Secrets struct {
	values map[string]string // by name: secrets, and "oauth:<provider>" for access tokens
	tool   string
	red    redactor
}

// ResolveSecrets resolves names (a tool's Options.Secrets) from src. A missing, empty, too short
// or too long, or non-UTF-8 value, an unreachable source or a nil source is a *SecretError
// naming the secret; the value never appears in the error.
func ResolveSecrets(ctx context.Context, src SecretSource, tool string, names []string) (*Secrets, error) {
	s := &Secrets{tool: tool}
	for _, name := range names {
		if src == nil {
			return nil, &SecretError{Name: name, Reason: "is not available: the worker has no secret source"}
		}
		v, err := safeSecret(ctx, src, name)
		if err != nil {
			if errors.Is(err, ErrSecretNotFound) {
				return nil, &SecretError{Name: name, Reason: "is not set on the worker", Err: err}
			}
			return nil, &SecretError{Name: name, Reason: "could not be read on the worker", Err: err}
		}
		if err := s.add(name, v); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// safeSecret calls src.Secret, recovering a panic (its value is not shown: it may hold anything).
func safeSecret(ctx context.Context, src SecretSource, name string) (v string, err error) {
	defer func() {
		if recover() != nil {
			v, err = "", errors.New("secret source panicked")
		}
	}()
	return src.Secret(ctx, name)
}

// AddAccessToken records provider's access token, so AccessToken returns it and Redact replaces
// it (as "oauth:<provider>").
func (s *Secrets) AddAccessToken(provider, token string) error {
	return s.add("oauth:"+provider, token)
}

func (s *Secrets) add(name, v string) error {
	switch {
	case strings.TrimSpace(v) == "":
		return &SecretError{Name: name, Reason: "is empty on the worker"}
	case len(v) < MinSecretBytes:
		return &SecretError{Name: name, Reason: fmt.Sprintf("is shorter than %d bytes on the worker (too short to redact)", MinSecretBytes)}
	case len(v) > MaxSecretBytes:
		return &SecretError{Name: name, Reason: fmt.Sprintf("is longer than %d bytes on the worker", MaxSecretBytes)}
	case !utf8.ValidString(v):
		return &SecretError{Name: name, Reason: "is not valid UTF-8 on the worker"}
	}
	if s.values == nil {
		s.values = map[string]string{}
	}
	s.values[name] = v
	s.red.add(name, v)
	return nil
}

// Len returns how many values s holds.
func (s *Secrets) Len() int {
	if s == nil {
		return 0
	}
	return len(s.values)
}

// Secret returns the value of the secret name, which the running tool must declare in its
// Options.Secrets. Outside an execution, for an undeclared name, or where the executor resolved
// none, it returns an error (naming the secret only).
func Secret(ctx context.Context, name string) (string, error) {
	e := executionFrom(ctx)
	if e == nil {
		return "", fmt.Errorf("secret %q: not inside a tool's execution", name)
	}
	if v, ok := e.Secrets.value(name); ok && !strings.HasPrefix(name, "oauth:") {
		return v, nil
	}
	return "", fmt.Errorf("secret %q is not declared by tool %q (Options.Secrets) or was not resolved by its executor", name, e.ToolName)
}

// AccessToken returns the calling principal's access token for provider, which the running tool
// must declare in its Options.Credentials. The executor obtained it (fresh, refreshed when it
// had expired) before the tool started; a call whose principal has not consented waits for the
// consent before the tool runs.
func AccessToken(ctx context.Context, provider string) (string, error) {
	e := executionFrom(ctx)
	if e == nil {
		return "", fmt.Errorf("access token for %q: not inside a tool's execution", provider)
	}
	if v, ok := e.Secrets.value("oauth:" + provider); ok {
		return v, nil
	}
	return "", fmt.Errorf("credential %q is not declared by tool %q (Options.Credentials) or was not obtained by its executor", provider, e.ToolName)
}

func (s *Secrets) value(name string) (string, bool) {
	if s == nil {
		return "", false
	}
	v, ok := s.values[name]
	return v, ok
}
