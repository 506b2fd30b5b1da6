// Package clientlimit is the per-client rate limit of toolgate's unauthenticated endpoints (the
// consent endpoint, the callback endpoint): a token bucket per remote address, over a bounded
// number of addresses.
package clientlimit

import (
	"math"
	"net"
	"net/http"
	"sync"
	"time"
)

// Limiter is a token bucket per client: perMinute requests a minute, as many at once. It tracks
// at most maxClients; past them a bucket that has refilled is forgotten (it is the same as a new
// one), and while none has, a new client is refused. Safe for concurrent use.
type Limiter struct {
	mu         sync.Mutex
	perMinute  float64
	maxClients int
	clients    map[string]*bucket
}

// bucket is one client's tokens as of last.
type bucket struct {
	tokens float64
	last   time.Time
}

// New returns a Limiter of perMinute requests a minute per client, tracking at most maxClients.
func New(perMinute, maxClients int) *Limiter {
	return &Limiter{perMinute: float64(perMinute), maxClients: maxClients, clients: map[string]*bucket{}}
}

// Allow takes one token of client's bucket at now; when there is none it returns false and how
// long until there is one (at least a second).
func (l *Limiter) Allow(client string, now time.Time) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.clients[client]
	if !ok {
		if len(l.clients) >= l.maxClients && !l.forgetRefilled(now) {
			return false, time.Minute
		}
		b = &bucket{tokens: l.perMinute, last: now}
		l.clients[client] = b
	}
	b.tokens = l.refilled(b, now)
	b.last = now
	if b.tokens < 1 {
		wait := time.Duration((1 - b.tokens) / l.perMinute * float64(time.Minute))
		return false, max(wait, time.Second)
	}
	b.tokens--
	return true, 0
}

// refilled is b's tokens at now.
func (l *Limiter) refilled(b *bucket, now time.Time) float64 {
	elapsed := max(now.Sub(b.last), 0)
	return math.Min(l.perMinute, b.tokens+elapsed.Minutes()*l.perMinute)
}

// forgetRefilled drops the buckets that are full again; it reports whether it dropped any.
func (l *Limiter) forgetRefilled(now time.Time) bool {
	dropped := false
	for c, b := range l.clients {
		if l.refilled(b, now) >= l.perMinute {
			delete(l.clients, c)
			dropped = true
		}
	}
	return dropped
}

// Address is the remote IP of r (a Limiter's client key).
func Address(r *http.Request) string {
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return host
	}
	return r.RemoteAddr
}
