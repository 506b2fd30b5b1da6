// Package health serves the liveness and readiness probes of toolgate's HTTP listeners (the
// metrics endpoint, the MCP listener, the codec server).
//
// # Paths
//
// LivePath (/healthz) answers 200 "ok" to GET and HEAD while the process serves HTTP: a failing
// liveness probe means the process is wedged and should be restarted. ReadyPath (/readyz)
// answers 200 "ready" while the listener's readiness check passes and 503 "not ready" otherwise:
// before the check is set (SetCheck), when it fails, and for good once Down is called (a process
// that begins to stop). Other methods get 405.
//
// # What they reveal
//
// Neither path asks for a token or checks the Host header: a kubelet probe carries no token and
// names the pod's IP as Host. So the bodies are fixed words: why a check failed goes to the
// log (once per change), never to the caller.
//
// # Cost
//
// A check's answer is reused for Options.CacheTTL (2 s) and a check runs under
// Options.Timeout (2 s), one at a time: probes at any rate cost the Temporal frontend at most
// one health RPC per CacheTTL and listener.
package health
