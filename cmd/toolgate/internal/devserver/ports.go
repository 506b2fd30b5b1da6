package devserver

import (
	"fmt"
	"net"
	"strconv"
)

// loopback is the only address the dev server and its UI listen on.
const loopback = "127.0.0.1"

// freePorts returns n distinct loopback ports that were free a moment ago: it listens on port 0
// n times, keeping every listener open until all are picked, then closes them. Someone else may
// bind one before the server does; Start detects that and retries.
func freePorts(n int) ([]int, error) {
	listeners := make([]net.Listener, 0, n)
	defer func() {
		for _, l := range listeners {
			_ = l.Close()
		}
	}()
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", net.JoinHostPort(loopback, "0"))
		if err != nil {
			return nil, fmt.Errorf("pick free port: %w", err)
		}
		listeners = append(listeners, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// checkPortFree fails fast when a port the caller chose is taken (retrying would not help).
func checkPortFree(port int) error {
	l, err := net.Listen("tcp", hostPort(port))
	if err != nil {
		return fmt.Errorf("check port %d: %w", port, err)
	}
	return l.Close()
}

// hostPort is "127.0.0.1:port".
func hostPort(port int) string {
	return net.JoinHostPort(loopback, strconv.Itoa(port))
}
