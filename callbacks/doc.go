// Package callbacks serves the callback URLs tools hand to external systems (toolcore.Callback):
// a payment provider's webhook, a CI system's completion hook. An [Endpoint] mints the URLs (it
// implements activities.CallbackURLs, worker.Options.Callbacks) and is the http.Handler that
// answers them: a request to a URL answers the waiting call's question with its body and content
// type (wire.UpdateInput), and the call's tool runs again with it.
//
// # The URL is a capability
//
// A URL is Options.URL + "/" + an opaque segment: the workflow ID, the question's key, the expiry
// and a 32-byte random token, sealed with AES-256-GCM under a key derived from the signing key
// (Options.Keys, read at each use). Whoever holds the URL can answer the question once; nobody
// else can make one:
//
//   - A segment that does not open under any signing key (forged, tampered, for another
//     endpoint) or has expired is refused with 410 without a call to Temporal.
//   - The workflow records only the token's SHA-256 (toolcore.CallbackParams) and refuses an
//     answer without the token, to an answered question, or when the call no longer waits: a
//     second request to a URL is refused (409), and so is one after the call ended or its wait
//     timed out (410). Even a leaked signing key mints no URL that answers a waiting call.
//   - The token never enters history, logs or errors; the URL is not logged either.
//
// # The handler
//
// It answers 403 to a Host that is neither loopback nor one of Options.AllowedHosts, 405 to any
// method but POST (GET and HEAD too: a link preview or a crawler answers nothing), 429 past
// Options.RequestsPerMinute of one remote address, 413 to a body over
// toolcore.MaxCallbackBodyBytes. Every answer is a short fixed text; the body is never echoed.
// A callback that arrives before its call waits (a system that calls back at once, while the
// attempt that handed the URL out is still ending) is retried for up to Options.EarlyWait.
//
// docs/talkback.md ("Callbacks") says how to run it; SECURITY.md says what the URL grants.
package callbacks
