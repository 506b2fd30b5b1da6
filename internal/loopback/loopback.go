// Package loopback recognizes the names of this machine.
package loopback

import (
	"net"
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
