// Package loopback recognizes the names of this machine.
package loopback

import (
	"net"
	"slices"
	"strconv"
	"strings"
)

// Host reports whether host (a name or IP, without port or brackets) is localhost or a loopback
// IP address.
func Host(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Address reports whether a host:port names this machine.
func Address(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	return err == nil && Host(host)
}

// HostHeader reports whether an HTTP Host header value is localhost, 127.0.0.1 or [::1], with an
// optional numeric port. Other spellings (127.1, 2130706433, localhost., sub.localhost, a bare ::1)
// are refused: none is needed to reach a loopback server, and each is a name some resolver may
// give another meaning. A server that answers only these names cannot be reached through DNS
// rebinding: the browser still sends the page's own name as Host.
func HostHeader(host string) bool {
	name, ok := HostName(host)
	if !ok {
		return false
	}
	switch strings.ToLower(name) {
	case "localhost", "127.0.0.1":
		return true
	case "::1":
		return strings.HasPrefix(host, "[")
	}
	return false
}

// HostName is the name of a Host header value without its port and brackets; ok is false when
// the port is not a number.
func HostName(host string) (name string, ok bool) {
	if h, port, err := net.SplitHostPort(host); err == nil {
		if _, err := strconv.ParseUint(port, 10, 16); err != nil {
			return "", false
		}
		return h, true
	}
	if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		return host[1 : len(host)-1], true
	}
	return host, true
}

// HostAllowed reports whether an HTTP Host header value names this machine (HostHeader) or, by
// its name without port, one of allowed (case-insensitive). An empty Host is refused.
func HostAllowed(host string, allowed []string) bool {
	if host == "" {
		return false
	}
	if HostHeader(host) {
		return true
	}
	name, ok := HostName(host)
	return ok && name != "" && slices.ContainsFunc(allowed, func(a string) bool { return strings.EqualFold(a, name) })
}
