package cluster

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
	"time"
)

// errStop ends a poll at once: the condition can no longer come true.
type errStop struct{ err error }

func (e errStop) Error() string { return e.err.Error() }
func (e errStop) Unwrap() error { return e.err }

// poll calls f until it succeeds, returns an errStop, or ctx ends, backing off from 10 ms to
// 200 ms between tries. On timeout the error says what f last returned.
func poll(ctx context.Context, f func(context.Context) error) error {
	delay := 10 * time.Millisecond
	for {
		err := f(ctx)
		if err == nil {
			return nil
		}
		if stop := (errStop{}); errors.As(err, &stop) {
			return stop.err
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%w (last error: %w)", context.Cause(ctx), err)
		case <-t.C:
		}
		delay = min(2*delay, 200*time.Millisecond)
	}
}

// freePort returns a loopback TCP port that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pick a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// freePorts returns n distinct free loopback ports (all held open until all are picked).
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("pick a free port: %w", err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// Membership ports are stored as a PostgreSQL smallint (cluster_membership.rpc_port): they must
// lie below 32768, under Linux's ephemeral range (32768-60999), so they are picked from here.
const (
	lowPortFirst = 20000
	lowPortLast  = 32767
)

// freeLowPorts returns n distinct free loopback ports in [lowPortFirst, lowPortLast], starting
// the search at a random port (all held open until all are picked).
func freeLowPorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	span := lowPortLast - lowPortFirst + 1
	start := rand.IntN(span)
	for i := 0; i < span && len(ports) < n; i++ {
		port := lowPortFirst + (start+i)%span
		l, err := net.Listen("tcp", hostPort(port))
		if err != nil {
			continue
		}
		defer l.Close()
		ports = append(ports, port)
	}
	if len(ports) < n {
		return nil, fmt.Errorf("pick %d free ports in %d-%d: found %d", n, lowPortFirst, lowPortLast, len(ports))
	}
	return ports, nil
}

func hostPort(port int) string {
	return net.JoinHostPort(loopback, strconv.Itoa(port))
}

// loopback is the address every process of the cluster binds.
const loopback = "127.0.0.1"
