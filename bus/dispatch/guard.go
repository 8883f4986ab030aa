package dispatch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"syscall"
	"time"

	"github.com/jido-bus/jido-bus/bus"
)

// SecretEnvPrefix is the prefix of every environment variable a webhook
// may name in secret_env. Options are written by whoever may start an
// agent, and a webhook's signature is an oracle on its key: without the
// prefix, a caller could have the node sign with any variable of its
// environment (a cloud key, a database password) and test guesses of it.
const SecretEnvPrefix = "JIDO_SECRET_"

// WebhookGuard is a compiled WebhookPolicy: it decides which webhook
// configs are admitted, and it holds the one HTTP client every webhook of
// a node sends with, whose connections are checked against the policy when
// they are made. The nil *WebhookGuard admits no webhook. A WebhookGuard is
// safe for concurrent use.
type WebhookGuard struct {
	allow     []destination
	private   []netip.Prefix
	client    *http.Client
	transport *http.Transport

	// lookup, when set, resolves host names instead of the system
	// resolver: the tests' seam for a name that resolves to a private
	// address.
	lookup func(ctx context.Context, host string) ([]netip.Addr, error)
}

// NewWebhookGuard compiles p. The error names the pattern or network that
// is wrong and shows the form wanted.
func NewWebhookGuard(p WebhookPolicy) (*WebhookGuard, error) {
	g := &WebhookGuard{}
	for _, raw := range p.Allow {
		d, err := parseDestination(strings.TrimSpace(raw), true)
		if err != nil {
			return nil, fmt.Errorf("webhook allow pattern %q %v (a pattern is scheme://host[:port][/path], e.g. https://hooks.example.com or https://*.example.com/hooks)", raw, err)
		}
		g.allow = append(g.allow, d)
	}
	for _, raw := range p.AllowPrivate {
		s := strings.TrimSpace(raw)
		var pfx netip.Prefix
		var err error
		if strings.Contains(s, "/") {
			pfx, err = netip.ParsePrefix(s)
		} else {
			var a netip.Addr
			if a, err = netip.ParseAddr(s); err == nil {
				pfx = netip.PrefixFrom(a, a.BitLen())
			}
		}
		if err != nil || pfx.Addr().Zone() != "" {
			return nil, fmt.Errorf("webhook allow-private network %q is not a CIDR such as 127.0.0.0/8 or fd00::/8 (or a single address)", raw)
		}
		if pfx.Addr().Is4In6() {
			pfx = netip.PrefixFrom(pfx.Addr().Unmap(), max(pfx.Bits()-96, 0))
		}
		g.private = append(g.private, pfx.Masked())
	}
	dialer := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second, ControlContext: g.control}
	g.transport = &http.Transport{
		// No proxy, whatever the environment says: a proxy would connect
		// to the destination itself, where the address check cannot see.
		Proxy: nil,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return g.dial(ctx, dialer, network, addr)
		},
		MaxIdleConns:          100,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
	g.client = &http.Client{
		Transport: g.transport,
		// A redirected POST may turn into a GET and lose the signal, and
		// the Location would be a destination nobody checked.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return g, nil
}

// CloseIdleConnections closes the connections kept for reuse; the guard
// stays usable. A node calls it when it stops.
func (g *WebhookGuard) CloseIdleConnections() {
	if g != nil {
		g.transport.CloseIdleConnections()
	}
}

// dial connects to addr. Without the test seam it is the dialer's own
// resolution; either way every address is checked by control just before
// the connection is made.
func (g *WebhookGuard) dial(ctx context.Context, d *net.Dialer, network, addr string) (net.Conn, error) {
	if g.lookup == nil {
		return d.DialContext(ctx, network, addr)
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	addrs, err := g.lookup(ctx, host)
	if err != nil {
		return nil, err
	}
	var errs []error
	for _, a := range addrs {
		c, err := d.DialContext(ctx, network, net.JoinHostPort(a.String(), port))
		if err == nil {
			return c, nil
		}
		errs = append(errs, err)
	}
	return nil, errors.Join(errs...)
}

// control is the dialer's last word before a socket connects: address is
// the resolved IP and port.
func (g *WebhookGuard) control(_ context.Context, _, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: cannot read the address %q", ErrPrivateAddress, address)
	}
	return g.checkAddr(ap.Addr())
}

// checkAddr refuses a non-public address outside AllowPrivate.
func (g *WebhookGuard) checkAddr(a netip.Addr) error {
	a = a.Unmap()
	what := classify(a)
	if what == "" {
		return nil
	}
	for _, p := range g.private {
		if p.Contains(a) {
			return nil
		}
	}
	return fmt.Errorf("%w: %s is %s; the node's operator allows such addresses with --webhook-allow-private CIDR", ErrPrivateAddress, a, what)
}

// Admit reports whether env's webhook policy (env.Webhooks) admits every
// webhook target of cfg, making the checks New makes, without building
// anything: it is how a request that names webhooks (an agent's start
// options) is refused before anything is stored. Other kinds always pass;
// cfg is assumed valid (Validate).
//
// The error is a *bus.Error naming the field: of type bus.ReasonForbidden
// when the policy refuses (a destination not allowed, a non-public address
// literal, user info, an inline secret, a secret_env outside the
// JIDO_SECRET_ prefix, a header the caller may not choose), of type
// bus.ReasonInvalidRequest when the secret_env variable is not set where
// the node runs. No error holds a value of the environment.
func Admit(cfg Config, env Env) error {
	return admit(cfg, env.withDefaults(), "")
}

func admit(cfg Config, env Env, path string) error {
	if cfg.Targets != nil {
		for i, t := range cfg.Targets {
			if err := admit(t, env, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		return nil
	}
	if cfg.kind() != KindWebhook {
		return nil
	}
	_, err := env.Webhooks.admit(cfg, env.LookupEnv, path)
	return err
}

// admit checks one webhook target and returns its secret, read from the
// environment.
func (g *WebhookGuard) admit(cfg Config, lookupEnv func(string) (string, bool), path string) (secret string, err error) {
	if g == nil || len(g.allow) == 0 {
		return "", policyError(path, "url", "%s: this node allows no webhook destinations; its operator allows them with --webhook-allow PATTERN (e.g. --webhook-allow https://hooks.example.com)", redactURL(cfg.URL))
	}
	u, err := parseDestination(cfg.URL, false)
	if err != nil {
		return "", policyError(path, "url", "%s %v", redactURL(cfg.URL), err)
	}
	if u.addr.IsValid() {
		if err := g.checkAddr(u.addr); err != nil {
			return "", policyError(path, "url", "%s: %s", redactURL(cfg.URL), strings.TrimPrefix(err.Error(), ErrPrivateAddress.Error()+": "))
		}
	}
	allowed := false
	for _, p := range g.allow {
		allowed = allowed || p.matches(u)
	}
	if !allowed {
		return "", policyError(path, "url", "%s does not match any destination this node allows; its operator adds one with --webhook-allow PATTERN", redactURL(cfg.URL))
	}
	for name := range cfg.Headers {
		if why := forbiddenHeader(strings.ToLower(name)); why != "" {
			return "", policyError(path, "headers", "header %q may not be set: %s", name, why)
		}
	}
	if cfg.Secret != "" {
		return "", policyError(path, "secret", "an inline secret is refused: agent options are stored in the event log and logged; put the key in an environment variable of the node and give its name as secret_env with a %s prefix (e.g. \"secret_env\":\"%sHOOK\")", SecretEnvPrefix, SecretEnvPrefix)
	}
	if !strings.HasPrefix(cfg.SecretEnv, SecretEnvPrefix) || len(cfg.SecretEnv) == len(SecretEnvPrefix) {
		return "", policyError(path, "secret_env", "%q is refused: a webhook may only name an environment variable whose name starts with %s (e.g. %sHOOK)", cfg.SecretEnv, SecretEnvPrefix, SecretEnvPrefix)
	}
	if !isEnvName(cfg.SecretEnv) {
		// No operator can set such a variable, so "not set" would tell
		// them to do the impossible.
		return "", policyError(path, "secret_env", "%q is refused: a webhook may only name an environment variable %s followed by letters, digits and underscores (e.g. %sHOOK)", cfg.SecretEnv, SecretEnvPrefix, SecretEnvPrefix)
	}
	secret, ok := lookupEnv(cfg.SecretEnv)
	if !ok || secret == "" {
		return "", fieldError(path, "secret_env", "the environment variable %s is not set (or empty) where the node runs; set it there and restart the node", cfg.SecretEnv)
	}
	return secret, nil
}

// isEnvName reports whether name is a portable environment variable name:
// letters, digits and underscores.
func isEnvName(name string) bool {
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// forbiddenHeader says why a caller may not choose the header whose
// lower-case name is lower, or "" when it may.
func forbiddenHeader(lower string) string {
	switch lower {
	case "authorization", "cookie", "cookie2":
		return "credentials in agent options are stored in the event log and logged; the receiver checks the Jido-Signature header instead"
	case "host":
		return "the host is the URL's"
	case "connection", "keep-alive", "te", "trailer", "transfer-encoding", "upgrade":
		return "it is a hop-by-hop header, the HTTP client's business"
	}
	if strings.HasPrefix(lower, "proxy-") {
		return "proxy headers are the HTTP client's business"
	}
	return ""
}

// policyError is fieldError for a refusal of the operator's policy.
func policyError(path, field, format string, args ...any) *bus.Error {
	e := fieldError(path, field, format, args...)
	e.Type = bus.ReasonForbidden
	return e
}
