package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// proxyClient is a perl HTTP client of the sandbox's proxy: "get URL" sends an absolute GET,
// "connect HOST:PORT" opens a tunnel and sends a GET / through it; it prints what it read.
const proxyClient = `
use Socket;
my ($mode, $target) = @ARGV;
my ($port) = $ENV{HTTPS_PROXY} =~ /:(\d+)$/ or die "no proxy\n";
socket(my $s, PF_INET, SOCK_STREAM, 0) or die "socket: $!\n";
connect($s, sockaddr_in($port, inet_aton("127.0.0.1"))) or die "connect: $!\n";
if ($mode eq "get") {
	syswrite($s, "GET $target HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
} else {
	syswrite($s, "CONNECT $target HTTP/1.1\r\nHost: $target\r\n\r\n");
	my $head = "";
	while ($head !~ /\r\n\r\n/) { sysread($s, my $b, 1) or last; $head .= $b }
	print $head;
	exit 0 unless $head =~ m{^HTTP/1.1 200};
	syswrite($s, "GET /tunneled HTTP/1.1\r\nHost: $target\r\nConnection: close\r\n\r\n");
}
while (sysread($s, my $b, 4096)) { print $b }
`

// proxyTarget is a host HTTP server standing in for allowed.test, and a Dial that reaches it
// for allowed.test only, recording what it was asked to dial.
type proxyTarget struct {
	srv   *httptest.Server
	mu    sync.Mutex
	dials []string
}

func newProxyTarget(t *testing.T) *proxyTarget {
	pt := &proxyTarget{srv: httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello from the host at %s", r.URL.Path)
	}))}
	t.Cleanup(pt.srv.Close)
	return pt
}

func (pt *proxyTarget) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	pt.mu.Lock()
	pt.dials = append(pt.dials, addr)
	pt.mu.Unlock()
	if addr != "allowed.test:80" && addr != "allowed.test:443" {
		return nil, errors.New("refused")
	}
	var d net.Dialer
	return d.DialContext(ctx, network, pt.srv.Listener.Addr().String())
}

func TestRunAllowHostsThroughTheProxy(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("AllowHosts needs a worker running as root")
	}
	pt := newProxyTarget(t)
	r, err := NewRunner(RunnerConfig{Dial: pt.dial})
	require.NoError(t, err)
	dir := newWorkspace(t, r)
	tests := []struct {
		name string
		args []string
		want string // in the output
	}{
		{"forward GET of an allowed host", []string{"get", "http://allowed.test/page"}, "hello from the host at /page"},
		{"tunnel to an allowed host", []string{"connect", "allowed.test:443"}, "hello from the host at /tunneled"},
		{"host names are case-insensitive", []string{"connect", "ALLOWED.test.:443"}, "hello from the host at /tunneled"},
		{"forward GET of another host", []string{"get", "http://denied.test/"}, "403 Forbidden"},
		{"tunnel to another host", []string{"connect", "denied.test:443"}, "403 Forbidden"},
		{"tunnel to another port", []string{"connect", "allowed.test:22"}, "403 Forbidden"},
		{"tunnel to the host's loopback", []string{"connect", pt.srv.Listener.Addr().String()}, "403 Forbidden"},
		{"an origin-form request", []string{"get", "/"}, "400 Bad Request"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := run(t, r, dir, Command{
				Argv:       append([]string{"perl", "-e", proxyClient, "--"}, tt.args...),
				AllowHosts: []string{"allowed.test"},
			})
			assert.Contains(t, out.Stdout, tt.want, out.Stderr)
		})
	}
	pt.mu.Lock()
	for _, addr := range pt.dials {
		assert.True(t, strings.HasPrefix(addr, "allowed.test:"), "only allowed hosts are dialed, not %s", addr)
	}
	pt.mu.Unlock()

	// The proxy is the only way out: the host's loopback stays unreachable.
	out := run(t, r, dir, Command{
		Argv:       []string{"perl", "-e", `use Socket; socket(my $s, PF_INET, SOCK_STREAM, 0) or die; connect($s, sockaddr_in($ARGV[0], inet_aton("127.0.0.1"))) and print "connected"`, "--", strings.Split(pt.srv.Listener.Addr().String(), ":")[1]},
		AllowHosts: []string{"allowed.test"},
	})
	assert.NotContains(t, out.Stdout, "connected")
	out = run(t, r, dir, Command{Shell: "echo $HTTPS_PROXY $http_proxy", AllowHosts: []string{"allowed.test"}})
	assert.Equal(t, "http://127.0.0.1:3128 http://127.0.0.1:3128\n", out.Stdout)
}

func TestRunAllowHostsNeedsDialAndValidHosts(t *testing.T) {
	r := newTestRunner(t) // no Dial
	dir := newWorkspace(t, r)
	_, err := r.Run(context.Background(), dir, Command{Argv: []string{"true"}, AllowHosts: []string{"example.com"}})
	assert.ErrorIs(t, err, ErrUnavailable)
	for _, bad := range []string{"", "*.example.com", "example.com:0", "example.com:http", "a b", "http://example.com", strings.Repeat("a", 300)} {
		_, err := r.Run(context.Background(), dir, Command{Argv: []string{"true"}, AllowHosts: []string{bad}})
		assert.ErrorIs(t, err, ErrInvalidCommand, bad)
	}
	_, err = r.Run(context.Background(), dir, Command{Argv: []string{"true"}, AllowHosts: []string{"example.com"}, Env: map[string]string{"HTTPS_PROXY": "http://evil"}})
	assert.ErrorIs(t, err, ErrInvalidCommand)
}
