package frontdoor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"

	"github.com/jido-bus/jido-bus/bus/natsserver"
)

// Listener is the gateways' HTTP listener, the door in front of them.
type Listener struct {
	srv    *http.Server
	url    string
	served chan struct{}
	cancel context.CancelFunc // ends the requests' contexts (streams)
}

// Listen serves on addr (HOST:PORT, port 0 a free one) what mounts
// returns for the listener's URL, behind the door o. A non-loopback addr
// needs a token in o (natsserver.ErrUnprotected); on a loopback one the
// loopback names (localhost, 127.0.0.1, ::1) are added to AllowHosts, so
// that a page that rebinds its own name to 127.0.0.1 is refused.
func Listen(addr string, o Options, mounts func(url string) map[string]http.Handler, log *slog.Logger) (*Listener, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("--http %q: want HOST:PORT, e.g. 127.0.0.1:8080: %w", addr, err)
	}
	if err := o.Check(); err != nil {
		return nil, fmt.Errorf("--http: %w", err)
	}
	if natsserver.IsLoopback(host) {
		o.AllowHosts = append(append([]string(nil), o.AllowHosts...), "localhost", "127.0.0.1", "::1")
		if net.ParseIP(host) == nil {
			o.AllowHosts = append(o.AllowHosts, host)
		}
	} else if !o.Authenticated() {
		return nil, fmt.Errorf("%w: refusing to serve HTTP on %s without a token: anyone who reaches it could call every project's tools. "+
			"Give a token from the environment (serve --http-token-env VAR, or http.token_env in --config), or listen on loopback (--http 127.0.0.1:8080)", natsserver.ErrUnprotected, addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--http: listen on %s: %w (choose another address)", addr, err)
	}
	base, cancel := context.WithCancel(context.Background())
	l := &Listener{url: "http://" + ln.Addr().String(), served: make(chan struct{}), cancel: cancel}
	l.srv = NewServer(o, New(o, mounts(l.url)))
	l.srv.BaseContext = func(net.Listener) context.Context { return base }
	go func() {
		defer close(l.served)
		// Serve returns ErrServerClosed once Shutdown shuts it down.
		if err := l.srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			log.Error("http: the listener stopped", "err", err)
		}
	}()
	log.Info("http", "url", l.url, "tokens", len(o.Tokens), "project_tokens", len(o.ProjectTokens), "allow_origins", o.AllowOrigins)
	return l, nil
}

// URL is the listener's base URL, http://HOST:PORT.
func (l *Listener) URL() string { return l.url }

// Shutdown ends the requests' contexts (streams) and drains the
// listener within ctx, closing what is left when it ends.
func (l *Listener) Shutdown(ctx context.Context) error {
	l.cancel()
	err := l.srv.Shutdown(ctx)
	if err != nil {
		err = errors.Join(fmt.Errorf("http: drain: %w", err), l.srv.Close())
	}
	<-l.served
	return err
}
