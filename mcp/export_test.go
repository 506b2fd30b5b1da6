package mcp

import (
	"net"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

// JWTVerifierPaced is JWTVerifier whose JWKS refetches for unknown key IDs are paced by
// minInterval (all callers) and callerInterval (each caller) instead of 10 s and 1 min.
func JWTVerifierPaced(opts JWTOptions, minInterval, callerInterval time.Duration) (auth.TokenVerifier, error) {
	return jwtVerifier(opts, func(k *keySet) { k.minInterval, k.callerInterval = minInterval, callerInterval })
}

// LimitConnsClock is LimitConns with the clock now.
func LimitConnsClock(ln net.Listener, opts ConnOptions, now func() time.Time) *ConnLimiter {
	l := LimitConns(ln, opts)
	l.now = now
	return l
}
