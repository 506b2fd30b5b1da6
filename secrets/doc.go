// Package secrets resolves the secrets tools declare (toolcore.Options.Secrets) on the worker:
// toolcore.SecretSource implementations for the environment, a directory of files, and a chain
// of sources. It imports only the standard library and toolcore.
//
// # Sources
//
//   - Env reads PREFIX+NAME from the worker's environment (the name upper-cased, '.' and '-'
//     as '_'). A prefix is required: a tool never reads an arbitrary variable of the worker.
//   - Dir reads <dir>/<name>, the /run/secrets layout of Docker and Kubernetes (its ..data
//     symlinks included), refusing anything that resolves outside the directory, and re-reads a
//     file when it changes: a rotated secret is used by the next attempt without a restart.
//   - Chain asks several sources in order; Map holds values in memory (tests, embedding).
//
// # Errors
//
// A source's error wraps toolcore.ErrSecretNotFound when it has no value for a name. An error
// text names the secret, never its value.
//
// docs/secrets.md says how a tool gets a key and how to write a source for a secret manager.
package secrets
