package toolbox

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRefusal(t *testing.T) {
	tests := []struct {
		give string
		want string
	}{
		{"127.0.0.1", "a loopback address"},
		{"127.255.0.9", "a loopback address"},
		{"::1", "a loopback address"},
		{"::ffff:127.0.0.1", "a loopback address"},
		{"10.1.2.3", "a private address"},
		{"172.16.0.1", "a private address"},
		{"172.31.255.255", "a private address"},
		{"192.168.1.1", "a private address"},
		{"fc00::1", "a private address"},
		{"fd12:3456::1", "a private address"},
		{"169.254.169.254", "a cloud metadata address"},
		{"::ffff:169.254.169.254", "a cloud metadata address"},
		{"fd00:ec2::254", "a cloud metadata address"},
		{"100.100.100.200", "a cloud metadata address"},
		{"169.254.1.1", "a link-local address"},
		{"fe80::1", "a link-local address"},
		{"fe80::1%eth0", "a link-local address"},
		{"100.64.0.1", "a carrier-grade NAT address"},
		{"100.127.255.254", "a carrier-grade NAT address"},
		{"0.0.0.0", "an unspecified address"},
		{"0.1.2.3", "an unspecified address"},
		{"::", "an unspecified address"},
		{"224.0.0.1", "a multicast address"},
		{"239.255.255.250", "a multicast address"},
		{"ff02::1", "a multicast address"},
		{"255.255.255.255", "a broadcast address"},
		{"240.0.0.1", "a reserved address"},
		{"192.0.2.1", "a documentation address"},
		{"2001:db8::1", "a documentation address"},
		{"198.18.0.1", "a special-purpose address"},
		{"2002:7f00:1::", "a special-purpose address"},
		{"2001::1", "a special-purpose address"},
		{"64:ff9b::7f00:1", "a loopback address"},
		{"64:ff9b::a00:1", "a private address"},
		{"::127.0.0.1", "a reserved address"},
		{"100::1", "a reserved address"},
		{"8.8.8.8", ""},
		{"1.1.1.1", ""},
		{"100.63.255.255", ""},
		{"100.128.0.0", ""},
		{"172.32.0.1", ""},
		{"2606:4700:4700::1111", ""},
		{"64:ff9b::808:808", ""},
	}
	for _, tt := range tests {
		t.Run(tt.give, func(t *testing.T) {
			assert.Equal(t, tt.want, refusal(netip.MustParseAddr(tt.give)))
		})
	}
}

func TestReservedName(t *testing.T) {
	for _, name := range []string{"localhost", "a.localhost", "metadata.google.internal", "x.internal", "metadata", "metadata.goog"} {
		assert.NotEmpty(t, reservedName(name), name)
	}
	for _, name := range []string{"example.com", "localhost.example.com", "internal.example.com", "metadata.example"} {
		assert.Empty(t, reservedName(name), name)
	}
}

func TestAllowList(t *testing.T) {
	l, err := parseAllowList([]string{
		"svc.test", "api.test:8443", "*.corp.test", "127.0.0.1:9000", "[::1]:9001", "10.0.0.0/8", "192.0.2.7", "::ffff:192.0.2.8",
		"fe80::1%eth0",
	})
	require.NoError(t, err)
	addrs := []struct {
		ip, port string
		want     bool
	}{
		{"127.0.0.1", "9000", true},
		{"::ffff:127.0.0.1", "9000", true},
		{"127.0.0.1", "9002", false},
		{"127.0.0.2", "9000", false},
		{"::1", "9001", true},
		{"::1", "9000", false},
		{"10.200.0.1", "1", true},
		{"11.0.0.1", "80", false},
		{"192.0.2.7", "22", true},
		{"192.0.2.8", "22", true},
		{"fe80::1%eth0", "80", true},
		{"fe80::2", "80", false},
	}
	for _, a := range addrs {
		assert.Equal(t, a.want, l.allowsAddr(netip.MustParseAddr(a.ip), a.port), "%s:%s", a.ip, a.port)
	}
	names := []struct {
		name, port string
		want       bool
	}{
		{"svc.test", "80", true},
		{"svc.test", "1234", true},
		{"x.svc.test", "80", false},
		{"api.test", "8443", true},
		{"api.test", "443", false},
		{"a.corp.test", "80", true},
		{"a.b.corp.test", "80", true},
		{"corp.test", "80", false},
		{"evilcorp.test", "80", false},
	}
	for _, n := range names {
		assert.Equal(t, n.want, l.allowsName(n.name, n.port), "%s:%s", n.name, n.port)
	}
}

// seqResolver answers each lookup with the next answer, like a rebinding DNS server.
type seqResolver struct {
	mu      sync.Mutex
	answers [][]netip.Addr
	lookups int
}

func (r *seqResolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	a := r.answers[min(r.lookups, len(r.answers)-1)]
	r.lookups++
	return a, nil
}

func TestGuardDialsExactlyWhatItChecked(t *testing.T) {
	res := &seqResolver{answers: [][]netip.Addr{
		{netip.MustParseAddr("93.184.215.14")},
		{netip.MustParseAddr("127.0.0.1")},
	}}
	var dialed []netip.AddrPort
	g := &guard{resolver: res, dial: func(_ context.Context, _ string, to netip.AddrPort) (net.Conn, error) {
		dialed = append(dialed, to)
		return nil, errors.New("stub: not connecting")
	}}
	// First answer is public: the guard dials that very address, after one lookup.
	_, err := g.DialContext(context.Background(), "tcp", "rebind.test:80")
	require.ErrorContains(t, err, "stub: not connecting")
	assert.Equal(t, []netip.AddrPort{netip.MustParseAddrPort("93.184.215.14:80")}, dialed)
	assert.Equal(t, 1, res.lookups)
	// The rebinding answer is refused before any dial.
	_, err = g.DialContext(context.Background(), "tcp", "rebind.test:80")
	var refused *refusedError
	require.ErrorAs(t, err, &refused)
	assert.Equal(t, `refused host "rebind.test": it does not resolve to a public address; `+
		`http_get reaches only public addresses unless the operator allows the host`, err.Error())
	assert.Len(t, dialed, 1)
}

func TestGuardRefusesMixedAnswers(t *testing.T) {
	g := &guard{resolver: fakeResolver{"mixed.test": {
		netip.MustParseAddr("93.184.215.14"), netip.MustParseAddr("10.0.0.1"),
	}}, dial: func(context.Context, string, netip.AddrPort) (net.Conn, error) {
		require.FailNow(t, "dialed")
		return nil, nil
	}}
	_, err := g.DialContext(context.Background(), "tcp", "mixed.test:443")
	assert.ErrorContains(t, err, "it does not resolve to a public address")
}

func TestGuardTrustedNameMayResolvePrivate(t *testing.T) {
	allow, err := parseAllowList([]string{"db.test:5000"})
	require.NoError(t, err)
	var dialed []netip.AddrPort
	g := &guard{allow: allow, resolver: fakeResolver{"db.test": {netip.MustParseAddr("10.0.0.5")}},
		dial: func(_ context.Context, _ string, to netip.AddrPort) (net.Conn, error) {
			dialed = append(dialed, to)
			return nil, errors.New("stub")
		}}
	_, err = g.DialContext(context.Background(), "tcp", "db.test:5000")
	require.ErrorContains(t, err, "stub")
	assert.Equal(t, []netip.AddrPort{netip.MustParseAddrPort("10.0.0.5:5000")}, dialed)
	_, err = g.DialContext(context.Background(), "tcp", "db.test:5001")
	assert.ErrorContains(t, err, "it does not resolve to a public address")
}

func TestControlExact(t *testing.T) {
	check := controlExact(netip.MustParseAddrPort("93.184.215.14:443"))
	assert.NoError(t, check("tcp4", "93.184.215.14:443", nil))
	assert.Error(t, check("tcp4", "127.0.0.1:443", nil))
	assert.Error(t, check("tcp4", "93.184.215.14:80", nil))
	assert.Error(t, check("tcp4", "not an address", nil))
}

func TestCheckHost(t *testing.T) {
	tests := []struct {
		give string
		want string
	}{
		{"example.com", ""},
		{"example.com.", ""},
		{"EXAMPLE.com", ""},
		{"a_b.example", ""},
		{"93.184.215.14", ""},
		{"2130706433", `host "2130706433" is not a canonical IP address or DNS name`},
		{"0177.0.0.1", `host "0177.0.0.1" is not a canonical IP address or DNS name`},
		{"0x7f.0.0.1", `host "0x7f.0.0.1" is not a canonical IP address or DNS name`},
		{"0x7f000001", `host "0x7f000001" is not a canonical IP address or DNS name`},
		{"127.1", `host "127.1" is not a canonical IP address or DNS name`},
		{"127.0.0.1.", `host "127.0.0.1." is not a canonical IP address or DNS name`},
		{"1.2.3.04", `host "1.2.3.04" is not a canonical IP address or DNS name`},
		{"bücher.de", `host "bücher.de" must be ASCII; write international names in punycode (xn--)`},
		{"a..b", `host "a..b" is not a valid DNS name`},
		{"a!b.com", `host "a!b.com" is not a valid DNS name`},
	}
	for _, tt := range tests {
		t.Run(tt.give, func(t *testing.T) {
			assert.Equal(t, tt.want, checkHost(tt.give))
		})
	}
}
