package toolbox

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// refusedError is a connection the address policy refuses. Its text is written for the model.
type refusedError struct {
	host   string     // as the URL names it
	addr   netip.Addr // the refused address; zero when the name itself is refused
	reason string     // e.g. "a loopback address"
	// literal is true when host is an IP address (addr is it, IPv4-mapped forms unmapped).
	literal bool
}

func (e *refusedError) Error() string {
	const hint = "http_get reaches only public addresses unless the operator allows the host"
	switch {
	case !e.addr.IsValid():
		return fmt.Sprintf("refused host %q: %s; %s", e.host, e.reason, hint)
	case e.literal:
		return fmt.Sprintf("refused host %q: %s is %s; %s", e.host, e.addr, e.reason, hint)
	default:
		// Neither the address nor its kind: a model must not learn what internal names resolve
		// to. The operator finds both in the log (see httpGetter.explain).
		return fmt.Sprintf("refused host %q: it does not resolve to a public address; %s", e.host, hint)
	}
}

// blockedPrefix is a special-purpose address block that is never public.
type blockedPrefix struct {
	prefix netip.Prefix
	reason string
}

// blocked lists the refused blocks, most specific first (IANA special-purpose registries).
var blocked = func() []blockedPrefix {
	table := []struct{ cidr, reason string }{
		{"169.254.169.254/32", "a cloud metadata address"},
		{"100.100.100.200/32", "a cloud metadata address"},
		{"fd00:ec2::254/128", "a cloud metadata address"},
		{"0.0.0.0/8", "an unspecified address"},
		{"10.0.0.0/8", "a private address"},
		{"100.64.0.0/10", "a carrier-grade NAT address"},
		{"127.0.0.0/8", "a loopback address"},
		{"169.254.0.0/16", "a link-local address"},
		{"172.16.0.0/12", "a private address"},
		{"192.0.0.0/24", "a special-purpose address"},
		{"192.0.2.0/24", "a documentation address"},
		{"192.88.99.0/24", "a special-purpose address"},
		{"192.168.0.0/16", "a private address"},
		{"198.18.0.0/15", "a special-purpose address"},
		{"198.51.100.0/24", "a documentation address"},
		{"203.0.113.0/24", "a documentation address"},
		{"224.0.0.0/4", "a multicast address"},
		{"255.255.255.255/32", "a broadcast address"},
		{"240.0.0.0/4", "a reserved address"},
		{"::/128", "an unspecified address"},
		{"::1/128", "a loopback address"},
		{"fe80::/10", "a link-local address"},
		{"fc00::/7", "a private address"},
		{"ff00::/8", "a multicast address"},
		{"64:ff9b:1::/48", "a special-purpose address"},
		{"2001:db8::/32", "a documentation address"},
		{"3fff::/20", "a documentation address"},
		{"2001::/23", "a special-purpose address"},
		{"2002::/16", "a special-purpose address"},
	}
	out := make([]blockedPrefix, len(table))
	for i, b := range table {
		out[i] = blockedPrefix{netip.MustParsePrefix(b.cidr), b.reason}
	}
	return out
}()

var (
	nat64Prefix   = netip.MustParsePrefix("64:ff9b::/96")
	globalUnicast = netip.MustParsePrefix("2000::/3")
)

// refusal says why ip is not a public address, or "" when it is. IPv4-mapped IPv6 addresses are
// judged as IPv4, and so are the IPv4 addresses embedded in the well-known NAT64 prefix.
func refusal(ip netip.Addr) string {
	ip = ip.Unmap().WithZone("")
	if nat64Prefix.Contains(ip) {
		b := ip.As16()
		return refusal(netip.AddrFrom4([4]byte(b[12:])))
	}
	for _, b := range blocked {
		if b.prefix.Contains(ip) {
			return b.reason
		}
	}
	if ip.Is6() && !globalUnicast.Contains(ip) {
		return "a reserved address"
	}
	return ""
}

// reservedName says why a host name is refused before resolution, or "".
func reservedName(name string) string {
	switch {
	case name == "localhost" || strings.HasSuffix(name, ".localhost"):
		return "a name reserved for the local host"
	case name == "metadata" || name == "metadata.goog" || strings.HasSuffix(name, ".internal"):
		return "a name reserved for private or cloud metadata use"
	}
	return ""
}

// normalizeName lowercases a host name and drops one trailing dot.
func normalizeName(host string) string {
	return strings.TrimSuffix(strings.ToLower(host), ".")
}

// allowList is Config.AllowHosts parsed.
type allowList struct {
	names []nameRule
	addrs []addrRule
}

type nameRule struct {
	name     string // normalized; for a wildcard the suffix without "*."
	wildcard bool
	port     string // "" for any
}

type addrRule struct {
	prefix netip.Prefix
	port   string // "" for any
}

func parseAllowList(entries []string) (allowList, error) {
	var l allowList
	for _, e := range entries {
		if err := l.add(strings.TrimSpace(e)); err != nil {
			return allowList{}, fmt.Errorf("parse allowed host %q: %w", e, err)
		}
	}
	return l, nil
}

func (l *allowList) add(e string) error {
	if e == "" {
		return errors.New("empty entry")
	}
	if strings.Contains(e, "/") {
		p, err := netip.ParsePrefix(e)
		if err != nil {
			return err
		}
		if p.Addr().Is4In6() {
			return errors.New("write IPv4-mapped prefixes in IPv4 form")
		}
		l.addrs = append(l.addrs, addrRule{prefix: p.Masked()})
		return nil
	}
	host, port := e, ""
	if ip, err := netip.ParseAddr(e); err == nil {
		l.addrs = append(l.addrs, addrRule{prefix: hostPrefix(ip)})
		return nil
	}
	if h, p, err := net.SplitHostPort(e); err == nil {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return fmt.Errorf("port %q is not between 1 and 65535", p)
		}
		host, port = h, p
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		l.addrs = append(l.addrs, addrRule{prefix: hostPrefix(ip), port: port})
		return nil
	}
	r := nameRule{name: normalizeName(host), port: port}
	if rest, ok := strings.CutPrefix(r.name, "*."); ok {
		r.name, r.wildcard = rest, true
	}
	if reason := checkName(r.name); reason != "" {
		return errors.New(reason)
	}
	l.names = append(l.names, r)
	return nil
}

// hostPrefix is the single-address prefix of ip, unmapped and without zone.
func hostPrefix(ip netip.Addr) netip.Prefix {
	ip = ip.Unmap().WithZone("")
	return netip.PrefixFrom(ip, ip.BitLen())
}

func (l allowList) allowsAddr(ip netip.Addr, port string) bool {
	ip = ip.Unmap().WithZone("")
	for _, r := range l.addrs {
		if r.prefix.Contains(ip) && (r.port == "" || r.port == port) {
			return true
		}
	}
	return false
}

func (l allowList) allowsName(name, port string) bool {
	for _, r := range l.names {
		match := name == r.name
		if r.wildcard {
			match = strings.HasSuffix(name, "."+r.name)
		}
		if match && (r.port == "" || r.port == port) {
			return true
		}
	}
	return false
}

// guard dials only addresses the policy permits. It checks the addresses a name resolves to and
// then connects to exactly those addresses (so a second, rebinding DNS answer is never used),
// and the dialer's Control hook checks the socket address once more before connect.
type guard struct {
	allow    allowList
	resolver Resolver
	timeout  time.Duration
	// dial connects to one permitted "ip:port". Optional: default dialExact.
	dial func(ctx context.Context, network string, to netip.AddrPort) (net.Conn, error)
}

// permitted resolves host (as the URL names it) and returns the addresses the policy permits
// for port, or a *refusedError.
func (g *guard) permitted(ctx context.Context, host, port string) ([]netip.AddrPort, error) {
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil || p == 0 {
		return nil, fmt.Errorf("dial %q: invalid port", host)
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		if !g.allow.allowsAddr(ip, port) {
			if reason := refusal(ip); reason != "" {
				return nil, &refusedError{host: host, addr: ip.Unmap().WithZone(""), reason: reason, literal: true}
			}
		}
		return []netip.AddrPort{netip.AddrPortFrom(ip.Unmap(), uint16(p))}, nil
	}
	name := normalizeName(host)
	trusted := g.allow.allowsName(name, port)
	if reason := reservedName(name); reason != "" && !trusted {
		return nil, &refusedError{host: host, reason: reason}
	}
	ips, err := g.resolver.LookupNetIP(ctx, "ip", name)
	if err != nil {
		return nil, fmt.Errorf("resolve %q: %w", name, err)
	}
	if len(ips) == 0 {
		return nil, fmt.Errorf("resolve %q: no addresses", name)
	}
	out := make([]netip.AddrPort, 0, len(ips))
	for _, ip := range ips {
		ip = ip.Unmap()
		if !trusted && !g.allow.allowsAddr(ip, port) {
			if reason := refusal(ip); reason != "" {
				return nil, &refusedError{host: host, addr: ip.WithZone(""), reason: reason}
			}
		}
		out = append(out, netip.AddrPortFrom(ip, uint16(p)))
	}
	return out, nil
}

// DialContext is http.Transport's dial hook: addr is the URL's "host:port".
func (g *guard) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("dial %q: %w", addr, err)
	}
	targets, err := g.permitted(ctx, host, port)
	if err != nil {
		return nil, err
	}
	dial := g.dial
	if dial == nil {
		dial = g.dialExact
	}
	var errs []error
	for _, to := range targets {
		conn, err := dial(ctx, network, to)
		if err == nil {
			return conn, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, errors.Join(errs...)
}

// dialExact connects to exactly to; the Control hook refuses any other socket address.
func (g *guard) dialExact(ctx context.Context, network string, to netip.AddrPort) (net.Conn, error) {
	d := net.Dialer{Timeout: g.timeout, Control: controlExact(to)}
	return d.DialContext(ctx, network, to.String())
}

// controlExact returns a net.Dialer Control hook that permits connecting to to only.
func controlExact(to netip.AddrPort) func(network, address string, _ syscall.RawConn) error {
	return func(_, address string, _ syscall.RawConn) error {
		got, err := netip.ParseAddrPort(address)
		if err != nil || got.Addr().Unmap() != to.Addr().Unmap() || got.Port() != to.Port() {
			return fmt.Errorf("connect %s: refused, checked address was %s", address, to)
		}
		return nil
	}
}
