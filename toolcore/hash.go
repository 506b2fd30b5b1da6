package toolcore

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
)

// definitionHash returns "sha256:" and the lowercase hex SHA-256 of the definition's canonical
// encoding: the JSON object
//
//	{"inputSchema":<canonical input schema>,"maxAttempts":<n>,"name":"<name>","sideEffect":"<class>"}
//
// with keys in this (sorted) order, no whitespace, the input schema in the canonical form of
// Arguments (keys sorted, minimal escaping, number literals as written), maxAttempts with defaults
// applied (1 for unsafe tools) and sideEffect as SideEffect.String. Description, output schema,
// timeouts and task queue are left out: changing them does not change what a running call does
// with its arguments or how often it may repeat.
func definitionHash(name string, input *compiledSchema, opts Options) string {
	b := make([]byte, 0, 64+len(input.canonical)+len(name))
	b = append(b, `{"inputSchema":`...)
	b = append(b, input.canonical...)
	b = append(b, `,"maxAttempts":`...)
	b = strconv.AppendInt(b, int64(opts.MaxAttempts), 10)
	b = append(b, `,"name":`...)
	b = appendQuoted(b, name)
	b = append(b, `,"sideEffect":`...)
	b = appendQuoted(b, opts.SideEffect.String())
	b = append(b, '}')
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}
