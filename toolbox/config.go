package toolbox

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"time"

	"go.uber.org/zap"
)

// Defaults of the zero Config.
const (
	DefaultHTTPTimeout      = 30 * time.Second
	DefaultHTTPMaxBytes     = 64 << 10
	DefaultHTTPMaxRedirects = 5
	DefaultReadMaxBytes     = 64 << 10
	DefaultListMaxEntries   = 100
)

// Fixed bounds that validators enforce. Validators read only these constants, never the Config,
// so a recorded workflow history replays with the same decisions whatever the worker's Config.
const (
	MaxSleepSeconds = 3600
	MaxURLBytes     = 2048
	MaxPathBytes    = 4096
	// MaxIntegerDigits bounds integer operands of add (the sum stays far below the serializer's
	// 4096-bit big.Int budget).
	MaxIntegerDigits = 1000
	// maxListScan bounds the directory entries list_dir reads before sorting.
	maxListScan = 4096
)

// Resolver looks up the addresses of a host name; *net.Resolver implements it.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Config selects and bounds the toolbox tools. It works at its zero value: echo, add, sleep and
// http_get (public addresses only) are registered; read_file and list_dir are not.
type Config struct {
	// Root is the directory read_file and list_dir serve. Optional: default "" registers neither
	// tool. It must exist and be a directory.
	Root string
	// ReadMaxBytes bounds the bytes read_file reads per call. Optional: default 64 KiB.
	ReadMaxBytes int
	// ListMaxEntries bounds the entries list_dir returns. Optional: default 100.
	ListMaxEntries int

	// DisableHTTP leaves http_get out. Optional: default false (http_get registered, reaching
	// public addresses only).
	DisableHTTP bool
	// AllowHosts lets http_get reach hosts that are otherwise refused (loopback, private,
	// link-local, metadata...). Each entry is one of:
	//   - a host name, "svc.example" (any port) or "svc.example:8080": the name is trusted,
	//     whatever addresses it resolves to; "*.svc.example" matches its subdomains;
	//   - an IP address, "10.1.2.3", "::1" (any port), or "10.1.2.3:8080", "[::1]:8080";
	//   - a CIDR prefix, "10.0.0.0/8" (any port).
	// Optional: default none.
	AllowHosts []string
	// HTTPTimeout bounds one http_get call: connect, redirects, headers and body. Optional:
	// default 30 seconds.
	HTTPTimeout time.Duration
	// HTTPMaxBytes bounds the response body bytes http_get reads. Optional: default 64 KiB.
	HTTPMaxBytes int
	// HTTPMaxRedirects bounds the redirects http_get follows. Optional: default 5; a negative
	// value follows none.
	HTTPMaxRedirects int
	// HTTPCredentials attach secrets to http_get's requests to given origins (an API key, a
	// bearer token): http_get then declares their secrets (toolcore.Options.Secrets), so its
	// attempts resolve them from the worker's secret source and redact them from what they
	// report. Optional: default none.
	HTTPCredentials []HTTPCredential
	// Resolver resolves host names for http_get. Optional: default net.DefaultResolver.
	Resolver Resolver

	// Ticker returns a channel ticking every d and a func that stops it; sleep counts its
	// seconds with it. Optional: default time.NewTicker.
	Ticker func(d time.Duration) (ticks <-chan time.Time, stop func())

	// Sandbox adds the sandbox tools: exec, workspace_read_file, workspace_list_dir,
	// workspace_write_file and its named commands (sandbox.go). Optional: default nil, none.
	Sandbox *Sandbox

	// Logger receives what the tools keep from the model but an operator may need, such as the
	// address a refused host name resolved to. Optional: default zap.NewNop().
	Logger *zap.Logger
}

// settings is a Config with defaults applied and the allow list parsed.
type settings struct {
	Config
	allow allowList
	auth  []httpAuth
}

func (c Config) settings() (settings, error) {
	s := settings{Config: c}
	if c.ReadMaxBytes < 0 || c.ListMaxEntries < 0 || c.HTTPMaxBytes < 0 || c.HTTPTimeout < 0 {
		return settings{}, fmt.Errorf("check config: limits must not be negative")
	}
	if s.ReadMaxBytes == 0 {
		s.ReadMaxBytes = DefaultReadMaxBytes
	}
	if s.ListMaxEntries == 0 {
		s.ListMaxEntries = DefaultListMaxEntries
	}
	if s.HTTPTimeout == 0 {
		s.HTTPTimeout = DefaultHTTPTimeout
	}
	if s.HTTPMaxBytes == 0 {
		s.HTTPMaxBytes = DefaultHTTPMaxBytes
	}
	switch {
	case s.HTTPMaxRedirects == 0:
		s.HTTPMaxRedirects = DefaultHTTPMaxRedirects
	case s.HTTPMaxRedirects < 0:
		s.HTTPMaxRedirects = 0
	}
	if s.Resolver == nil {
		s.Resolver = net.DefaultResolver
	}
	if s.Logger == nil {
		s.Logger = zap.NewNop()
	}
	if s.Ticker == nil {
		s.Ticker = func(d time.Duration) (<-chan time.Time, func()) {
			t := time.NewTicker(d)
			return t.C, t.Stop
		}
	}
	allow, err := parseAllowList(c.AllowHosts)
	if err != nil {
		return settings{}, fmt.Errorf("check config: %w", err)
	}
	s.allow = allow
	if s.auth, err = checkCredentials(c.HTTPCredentials); err != nil {
		return settings{}, fmt.Errorf("check config: %w", err)
	}
	if c.Root != "" {
		fi, err := os.Stat(c.Root)
		if err != nil {
			return settings{}, fmt.Errorf("check root: %w", err)
		}
		if !fi.IsDir() {
			return settings{}, fmt.Errorf("check root: %q is not a directory", c.Root)
		}
	}
	return s, nil
}
