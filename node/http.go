package node

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/jido-bus/jido-bus/bus/natsbus"
	"github.com/jido-bus/jido-bus/internal/frontdoor"
	a2agw "github.com/jido-bus/jido-bus/projects/gateway/a2a"
	mcpgw "github.com/jido-bus/jido-bus/projects/gateway/mcp"
)

// HTTPConfig configures the gateways' HTTP listener (serve --http). The
// zero value serves nothing.
type HTTPConfig struct {
	// Listen is HOST:PORT (port 0 picks a free one); empty: no listener.
	// A non-loopback address needs a token in Options (ErrUnprotected).
	Listen string
	// Options configure the front door: tokens, allowed origins and
	// hosts, limits, timeouts. On a loopback Listen the loopback names
	// (localhost, 127.0.0.1, ::1) are added to AllowHosts, so that a page
	// that rebinds its own name to 127.0.0.1 is refused.
	frontdoor.Options
}

// httpServer is the running listener, and the MCP gateway closed with it
// (its hook on the engine).
type httpServer struct {
	*frontdoor.Listener
	mcp *mcpgw.Gateway
}

// gatewayMounts returns what the front door serves beside its own
// /healthz: pattern → handler, the full path seen by the handler. url is
// the listener's, for the A2A agent cards.
func (n *Node) gatewayMounts(url string, o frontdoor.Options, mcp *mcpgw.Gateway) map[string]http.Handler {
	a2a := a2agw.New(n.A2AHost(), a2agw.Options{
		BaseURL: url, BearerAuth: o.Authenticated(), MaxBodyBytes: o.MaxBodyBytes, Log: n.log.With("component", "a2a"),
	})
	return map[string]http.Handler{
		"/mcp":  frontdoor.ReportRefusals(mcp.Handler(), n.httpRefused),
		"/mcp/": frontdoor.ReportRefusals(mcp.Handler(), n.httpRefused),
		"/a2a/": frontdoor.ReportRefusals(a2a.Handler(), n.httpRefused),
	}
}

// serveHTTP starts the listener of cfg.HTTP, if any, and logs its URL.
func (n *Node) serveHTTP(cfg HTTPConfig) error {
	if cfg.Listen == "" {
		return nil
	}
	o := cfg.Options
	o.OnRefused = n.httpRefused
	// An agent card says how to authenticate: a client reads it first.
	o.Public = append(append([]string(nil), o.Public...), a2agw.Public()...)
	if o.Healthy == nil {
		evlog := n.evlog
		o.Healthy = func() error { return evlog.Failed() }
	}
	mcp := mcpgw.New(n.MCPHost(), mcpgw.Options{Version: n.cfg.Version, Logger: n.log.With("component", "mcp")})
	l, err := frontdoor.Listen(cfg.Listen, o, func(url string) map[string]http.Handler { return n.gatewayMounts(url, o, mcp) }, n.log)
	if err != nil {
		mcp.Close()
		return err
	}
	n.http = &httpServer{l, mcp}
	return nil
}

// HTTPURL is the base URL of the gateways' listener (http://HOST:PORT),
// or "" when Config.HTTP.Listen was empty.
func (n *Node) HTTPURL() string {
	if n.http == nil {
		return ""
	}
	return n.http.URL()
}

// stopHTTP stops taking HTTP requests, ends the streams in flight (their
// contexts are cancelled) and waits within ctx for the handlers to
// return; past ctx the connections are closed.
func (n *Node) stopHTTP(ctx context.Context) error {
	h := n.http
	if h == nil {
		return nil
	}
	n.http = nil
	err := h.Shutdown(ctx)
	h.mcp.Close()
	return err
}

// httpStopTimeout bounds stopping the listener when the node fails to start.
const httpStopTimeout = 5 * time.Second

// httpRefused files a request the front door refused as a dead letter
// (reason: its type word), like every input the node refuses on NATS,
// and counts it. Neither its body nor its headers are kept: they may
// carry a token.
func (n *Node) httpRefused(r *http.Request, code int, typ, message string) {
	n.metrics.Refused(typ)
	n.fileDeadLetter(natsbus.DeadLetter{
		Reason:   typ,
		Error:    fmt.Sprintf("HTTP %d from %s: %s", code, r.RemoteAddr, message),
		Subject:  "http " + r.Method + " " + r.URL.Path,
		Time:     time.Now().UTC(),
		Withheld: true,
	})
}
