package credentials

import (
	"math"
	"sync"
	"time"
)

// clientLimiter is a token bucket per client (the consent endpoint's remote address): perMinute
// requests a minute, as many at once. It tracks at most maxClients; past them a bucket that has
// refilled is forgotten (it is the same as a new one), and while none has, a new client is
// refused.
type clientLimiter struct {
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

func newClientLimiter(perMinute, maxClients int) *clientLimiter {
	return &clientLimiter{perMinute: float64(perMinute), maxClients: maxClients, clients: map[string]*bucket{}}
}

// allow takes one token of client's bucket at now; when there is none it returns false and how
// long until there is one.
func (l *clientLimiter) allow(client string, now time.Time) (bool, time.Duration) {
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
func (l *clientLimiter) refilled(b *bucket, now time.Time) float64 {
	elapsed := max(now.Sub(b.last), 0)
	return math.Min(l.perMinute, b.tokens+elapsed.Minutes()*l.perMinute)
}

// forgetRefilled drops the buckets that are full again; it reports whether it dropped any.
func (l *clientLimiter) forgetRefilled(now time.Time) bool {
	dropped := false
	for c, b := range l.clients {
		if l.refilled(b, now) >= l.perMinute {
			delete(l.clients, c)
			dropped = true
		}
	}
	return dropped
}
