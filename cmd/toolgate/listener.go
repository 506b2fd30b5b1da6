package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"go.temporal.io/sdk/client"
	"go.uber.org/zap"

	"github.com/toolgate/toolgate/internal/health"
	"github.com/toolgate/toolgate/internal/loopback"
)

// endpointMaxConns bounds the connections of an unauthenticated endpoint's listener (the consent
// endpoint's browsers, the callback endpoint's external systems).
const endpointMaxConns = 256

// publicFlags name the flags of one endpoint that worker and dev serve without authentication
// (its URL is the capability): the listen address and the public URL. They only appear in
// messages.
type publicFlags struct {
	listen, url string
}

// publicListener is such an endpoint's listener: bound (port 0 has become a port), its public
// URL known, not serving yet. Call close when done.
type publicListener struct {
	ln         net.Listener
	url        string   // the public URL: the flag's, or http://<bound address><path>
	allowHosts []string // the Host names accepted besides loopback: the flag's and the URL's host
	srv        *http.Server
	done       chan struct{}
	closeOnce  sync.Once
}

// openPublicListener binds listen. A non-loopback address needs publicURL (the endpoint has no
// authentication: the public URL says the exposure is meant), which must be https beyond
// loopback; without one the URL is http://<bound address><path>.
func openPublicListener(flags publicFlags, listen, publicURL, path string, allowHosts []string) (*publicListener, error) {
	if _, _, err := net.SplitHostPort(listen); err != nil {
		return nil, badInput(fmt.Errorf("%s %q: want host:port: %w", flags.listen, listen, err))
	}
	if !loopback.Address(listen) && publicURL == "" {
		return nil, badInput(fmt.Errorf("%s %s is not a loopback address: name the public URL with %s (https)", flags.listen, listen, flags.url))
	}
	allow := append([]string(nil), allowHosts...)
	if publicURL != "" {
		u, err := url.Parse(publicURL)
		if err != nil || u.Host == "" || (u.Scheme != "https" && (u.Scheme != "http" || !loopback.Host(u.Hostname()))) {
			return nil, badInput(fmt.Errorf("%s %q: want an absolute https URL (http only on a loopback host)", flags.url, publicURL))
		}
		allow = append(allow, u.Hostname())
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, badInput(fmt.Errorf("%s %s: %w", flags.listen, listen, err))
	}
	if publicURL == "" {
		publicURL = "http://" + ln.Addr().String() + path
	}
	return &publicListener{ln: ln, url: publicURL, allowHosts: allow}, nil
}

// serve serves handler at path and, when it differs, at the public URL's path (a proxy that keeps
// it), behind the readiness probe of c; ctx's end makes the probe fail. name is the endpoint's,
// for the log. suffix "/" serves the paths under them too.
func (l *publicListener) serve(ctx context.Context, logger *zap.Logger, c client.Client, name, path, suffix string, handler http.Handler) {
	mux := http.NewServeMux()
	mux.Handle(path+suffix, handler)
	if u, err := url.Parse(l.url); err == nil && u.Path != "" {
		public := u.Path
		if suffix != "" {
			public = strings.TrimSuffix(public, "/") + suffix
		}
		if public != path+suffix {
			mux.Handle(public, handler)
		}
	}
	probe := health.NewProbe(health.Options{Logger: logger.Named("health")})
	probe.SetCheck(clientHealth(c))
	context.AfterFunc(ctx, probe.Down)
	l.srv = &http.Server{Handler: probe.Wrap(mux), ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
		WriteTimeout: 2 * time.Minute, IdleTimeout: time.Minute, MaxHeaderBytes: 16 << 10, ErrorLog: zap.NewStdLog(logger)}
	l.done = make(chan struct{})
	go func() {
		defer close(l.done)
		if err := l.srv.Serve(limitListener(l.ln, endpointMaxConns)); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("serve the "+name+" endpoint", zap.Error(err))
		}
	}()
}

// close stops the endpoint, once (a nil one is fine).
func (l *publicListener) close() {
	if l == nil {
		return
	}
	l.closeOnce.Do(func() {
		if l.srv == nil {
			_ = l.ln.Close()
			return
		}
		_ = l.srv.Close()
		<-l.done
	})
}
