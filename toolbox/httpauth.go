package toolbox

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/toolgate/toolgate/internal/loopback"
	"github.com/toolgate/toolgate/toolcore"
)

// HTTPCredential attaches a secret to http_get's requests to one origin: the header Header with
// the value Prefix + the secret's value. The secret is resolved from the worker's secret source
// (worker.Options.Secrets) when an attempt starts and redacted from everything the attempt
// reports; the model never sees it and cannot send it elsewhere: a redirect to another origin
// drops the header.
type HTTPCredential struct {
	// Origin is "https://host" or "https://host:port"; plain http is allowed for a loopback
	// host only (the value would cross the network in clear text). Required.
	Origin string
	// Header is the request header's name ("Authorization", "X-Api-Key"). Required.
	Header string
	// Secret names the secret holding the value (toolcore.Options.Secrets). Required.
	Secret string
	// Prefix goes before the value ("Bearer "). Optional.
	Prefix string
}

// httpAuth is a checked HTTPCredential: its origin normalized.
type httpAuth struct {
	origin string // scheme://host:port, port always explicit
	header string // canonical
	secret string
	prefix string
}

// checkCredentials checks Config.HTTPCredentials.
func checkCredentials(creds []HTTPCredential) ([]httpAuth, error) {
	var out []httpAuth
	for _, c := range creds {
		u, err := url.Parse(c.Origin)
		if err != nil || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.User != nil || u.Fragment != "" {
			return nil, fmt.Errorf("http credential origin %q must be scheme://host[:port] without path, query or credentials", c.Origin)
		}
		switch {
		case u.Scheme == "https":
		case u.Scheme == "http" && loopback.Host(u.Hostname()):
		default:
			return nil, fmt.Errorf("http credential origin %q: https only (plain http for a loopback host)", c.Origin)
		}
		header := http.CanonicalHeaderKey(c.Header)
		if !isToken(header) || header == "Host" {
			return nil, fmt.Errorf("http credential for %q: header name %q is not valid", c.Origin, c.Header)
		}
		if err := toolcore.CheckSecretName(c.Secret); err != nil {
			return nil, fmt.Errorf("http credential for %q: %w", c.Origin, err)
		}
		if strings.ContainsAny(c.Prefix, "\r\n") {
			return nil, fmt.Errorf("http credential for %q: prefix must be one line", c.Origin)
		}
		a := httpAuth{origin: originOf(u), header: header, secret: c.Secret, prefix: c.Prefix}
		if slices.ContainsFunc(out, func(b httpAuth) bool { return b.origin == a.origin && b.header == a.header }) {
			return nil, fmt.Errorf("http credential for %q: header %s given twice", c.Origin, header)
		}
		out = append(out, a)
	}
	return out, nil
}

// isToken reports whether s is a non-empty HTTP token (RFC 9110): a valid header name.
func isToken(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return s != ""
}

// originOf is u's origin with an explicit port.
func originOf(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Hostname()) + ":" + port
}

// secretNames are the secrets the credentials name, each once: http_get declares them.
func secretNames(auth []httpAuth) []string {
	var names []string
	for _, a := range auth {
		if !slices.Contains(names, a.secret) {
			names = append(names, a.secret)
		}
	}
	return names
}

// authorize sets on req the headers of the credentials for its origin and removes those of every
// other origin (a redirect keeps the first request's headers). A secret the attempt did not
// resolve is an error: the request is not sent.
func (h *httpGetter) authorize(req *http.Request) error {
	origin := originOf(req.URL)
	for _, a := range h.s.auth {
		req.Header.Del(a.header)
	}
	for _, a := range h.s.auth {
		if a.origin != origin {
			continue
		}
		v, err := toolcore.Secret(req.Context(), a.secret)
		if err != nil {
			return err
		}
		req.Header.Set(a.header, a.prefix+v)
	}
	return nil
}
