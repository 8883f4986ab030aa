package frontdoor

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/jido-bus/jido-bus/conversation"
)

// Defaults of the zero Options.
const (
	DefaultMaxBodyBytes      = 1 << 20
	DefaultMaxConcurrent     = 256
	DefaultMaxPerCaller      = 64
	DefaultReadTimeout       = 10 * time.Second
	DefaultWriteTimeout      = 30 * time.Second
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultIdleTimeout       = 120 * time.Second
	DefaultMaxHeaderBytes    = 64 << 10
)

// Options configure the door. The zero value admits every request as
// "anonymous" (no token configured), checks no Origin but refuses one that
// is present, and applies the defaults above; callers that listen beyond
// loopback must set a token (the node refuses to start otherwise).
type Options struct {
	// OnRefused, when set, hears every request the door refuses (after
	// the answer is written): its status, type word and message. The node
	// files each as a dead letter. It must not keep r past the call.
	OnRefused func(r *http.Request, code int, typ, message string)
	// Tokens admit every path: bearer token → the name it is recorded
	// under (gateway.Caller.Name). A token is compared in constant time.
	Tokens map[string]string
	// ProjectTokens admit only the paths of one project (/mcp/{project},
	// /mcp/{project}/…, /a2a/{project}, /a2a/{project}/…): project id →
	// token → name. With no token in Tokens nor here, the door admits
	// every request as "anonymous", an admin.
	//
	// A name is who the caller is: the owner of the A2A tasks it starts,
	// which no other caller sees. So one name is one token (Check).
	ProjectTokens map[string]map[string]string
	// Public are requests (ServeMux patterns with a method, such as "GET
	// /a2a/{project}/.well-known/agent-card.json") whose answers are for
	// anyone: one that carries no Authorization header is admitted
	// without a token and reaches its mount with no caller in its context
	// (gateway.CallerFrom reports none); one that carries a token is
	// checked as any other. All requests admitted without a token share
	// one caller's share of MaxPerCaller. Every other check applies.
	Public []string
	// Admins are names of tokens in Tokens whose callers are admins
	// (gateway.Caller.Admin): they see every caller's A2A tasks. The node
	// makes the token of --http-token-env one.
	Admins []string
	// MaxModes are, by token name, the loosest permission mode
	// (conversation.ModePlan or ModeAsk) a conversation that token's
	// callers start may have (gateway.Caller.MaxMode); a name not here
	// may start one in any mode, within the project's policy.
	MaxModes map[string]string
	// AllowOrigins are the browser origins (scheme://host[:port]) whose
	// requests are admitted. A request without Origin (every non-browser
	// client) is admitted; one with another Origin, "null" included, is
	// refused 403: the MCP spec's guard against DNS rebinding.
	AllowOrigins []string
	// AllowHosts, when set, are the host names (no port) the Host header
	// may name; another is refused 403. The node sets the loopback names
	// on a loopback listener, so that a page rebinding its own name to
	// 127.0.0.1 reaches nothing, even with a GET that carries no Origin.
	AllowHosts []string
	// MaxBodyBytes bounds a request's body; a larger one is refused 413
	// before the mount reads any of it. Zero: DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// MaxPerCaller bounds the requests of one caller in flight past the
	// checks (one token's name; where no token is configured every
	// caller is one), from reading the body to the end of the answer,
	// streams included; one more is refused 503 with Retry-After. So a
	// token that holds many requests, slow bodies or long streams, takes
	// its own share and never another's. Zero: DefaultMaxPerCaller.
	MaxPerCaller int
	// MaxConcurrent bounds the requests in flight in the gateways (each
	// counted once its body is read, streams included), whoever sent
	// them; one more is refused 503 with Retry-After, never queued.
	// Zero: DefaultMaxConcurrent. /healthz is not counted.
	MaxConcurrent int
	// ReadTimeout bounds reading a request's body (408 past it): far
	// shorter than a stream lives, so that a body sent slowly, or
	// headers followed by nothing, hold a slot of their caller's for
	// that long at most. WriteTimeout bounds each write of a response,
	// so that a stream lives as long as its client reads it, and a
	// client that stops reading is cut off. Zero: the defaults.
	ReadTimeout, WriteTimeout time.Duration
	// ReadHeaderTimeout, IdleTimeout and MaxHeaderBytes configure the
	// http.Server NewServer returns. Zero: the defaults.
	ReadHeaderTimeout, IdleTimeout time.Duration
	MaxHeaderBytes                 int
	// Healthy, when set, is asked by /healthz: an error makes it 503
	// {"status":"unavailable"} (the reason is not shown: /healthz needs
	// no token).
	Healthy func() error
}

func (o Options) withDefaults() Options {
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	if o.MaxBodyBytes == 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.MaxConcurrent == 0 {
		o.MaxConcurrent = DefaultMaxConcurrent
	}
	if o.MaxPerCaller == 0 {
		o.MaxPerCaller = DefaultMaxPerCaller
	}
	if o.MaxHeaderBytes == 0 {
		o.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	def(&o.ReadTimeout, DefaultReadTimeout)
	def(&o.WriteTimeout, DefaultWriteTimeout)
	def(&o.ReadHeaderTimeout, DefaultReadHeaderTimeout)
	def(&o.IdleTimeout, DefaultIdleTimeout)
	return o
}

// Authenticated says whether o configures any token, so that the door
// refuses requests without one.
func (o Options) Authenticated() bool { return len(o.Tokens) > 0 || len(o.ProjectTokens) > 0 }

// Check says what in o the door cannot use: an empty token or one with
// spaces (no client could send it), a token without a name, a project id
// that is not one path segment, an origin that is not scheme://host[:port].
func (o Options) Check() error {
	var errs []error
	checkTokens := func(where string, m map[string]string) {
		for tok, name := range m {
			switch {
			case tok == "":
				errs = append(errs, fmt.Errorf("%s: an empty token (name %q): set a non-empty secret", where, name))
			case strings.ContainsAny(tok, " \t\r\n,\""):
				errs = append(errs, fmt.Errorf("%s: the token named %q holds a space, comma or quote: a bearer token cannot carry them", where, name))
			case name == "":
				errs = append(errs, fmt.Errorf("%s: a token without a name: give it one, it names the caller in the project's log", where))
			}
		}
	}
	checkTokens("tokens", o.Tokens)
	for p, m := range o.ProjectTokens {
		if p == "" || strings.ContainsAny(p, "/\\%") || p == "." || p == ".." {
			errs = append(errs, fmt.Errorf("project tokens: project id %q: want one path segment", p))
		}
		checkTokens("project "+p+" tokens", m)
	}
	errs = append(errs, o.checkNames()...)
	for _, origin := range o.AllowOrigins {
		if _, err := normalOrigin(origin); err != nil {
			errs = append(errs, err)
		}
	}
	for _, h := range o.AllowHosts {
		if h == "" || strings.ContainsAny(h, "/@ ") || (strings.Contains(h, ":") && net.ParseIP(strings.Trim(h, "[]")) == nil) {
			errs = append(errs, fmt.Errorf("allowed host %q: want a host name or address without scheme or port (localhost, 127.0.0.1, ::1)", h))
		}
	}
	if o.MaxBodyBytes < 0 || o.MaxConcurrent < 0 || o.MaxPerCaller < 0 {
		errs = append(errs, errors.New("max body bytes, max concurrent and max per caller must not be negative"))
	}
	return errors.Join(errs...)
}

// normalOrigin returns origin as browsers send it: lower case, no default
// port, no path.
func normalOrigin(origin string) (string, error) {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.User != nil {
		return "", fmt.Errorf("allowed origin %q: want scheme://host[:port], e.g. http://localhost:6274 (\"null\" is never allowed)", origin)
	}
	host := strings.ToLower(u.Host)
	if p := u.Port(); (u.Scheme == "http" && p == "80") || (u.Scheme == "https" && p == "443") {
		host = strings.TrimSuffix(host, ":"+p)
	}
	return u.Scheme + "://" + host, nil
}

// checkNames says which names are not one token each: a name is who the
// caller is (the owner of its A2A tasks), so two tokens under one name
// would see each other's tasks, and a token with two names would be
// either. "anonymous" is the name of every caller where no token is
// configured. Each admin must name a token of Tokens.
func (o Options) checkNames() []error {
	var errs []error
	byName := map[string]string{} // name → token
	byToken := map[string]string{}
	note := func(tok, name string) {
		switch {
		case name == "":
			return
		case name == anonymous:
			errs = append(errs, fmt.Errorf("a token named %q: that is the name of every caller where no token is configured; give it another", anonymous))
		case byName[name] != "" && byName[name] != tok:
			errs = append(errs, fmt.Errorf("two tokens are named %q: a name is who the caller is (the A2A tasks it started are its own), give each token its own", name))
		case byToken[tok] != "" && byToken[tok] != name:
			errs = append(errs, fmt.Errorf("one token is named both %q and %q: give it one name", byToken[tok], name))
		}
		byName[name], byToken[tok] = tok, name
	}
	for _, tok := range sortedKeys(o.Tokens) {
		note(tok, o.Tokens[tok])
	}
	for _, p := range sortedKeys(o.ProjectTokens) {
		for _, tok := range sortedKeys(o.ProjectTokens[p]) {
			note(tok, o.ProjectTokens[p][tok])
		}
	}
	for _, a := range o.Admins {
		if tok := byName[a]; tok == "" || o.Tokens[tok] != a {
			errs = append(errs, fmt.Errorf("admin %q names no token that admits every path: an admin is a token of the http token env (or http.tokens without a project)", a))
		}
	}
	for _, name := range sortedKeys(o.MaxModes) {
		if byName[name] == "" {
			errs = append(errs, fmt.Errorf("max_mode of %q names no token: give it in the token's own entry of http.tokens", name))
		}
		if err := conversation.CheckMode(o.MaxModes[name]); err != nil {
			errs = append(errs, fmt.Errorf("max_mode of token %q: %w", name, err))
		}
	}
	return errs
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
