// Package frontdoor is the HTTP listener's front door: every request to
// the gateways (/mcp, /mcp/{project}, /a2a/{project}/…) passes its checks
// before a gateway sees it, so that the gateways need not know about
// tokens, origins or sizes.
//
// In order, a request is refused with a JSON body
// {"error":{"type","message"}} when
//   - its Host is not allowed (403 forbidden: DNS rebinding),
//   - its Origin is present and not allowed, "null" included (403),
//   - its path is not clean (.., %2e%2e, //, an encoded / or \: 400
//     invalid_request), so that a project token's scope cannot be walked
//     out of,
//   - it carries access_token in the query (400: URLs end up in logs and
//     histories; send Authorization: Bearer),
//   - a token is configured and it has none or an unknown one (401
//     unauthorized, WWW-Authenticate: Bearer), or a project's token on
//     another path (403 forbidden); a request of Options.Public that
//     carries no token is admitted without a caller,
//   - no mount serves its path (404 not_found, after the token check),
//   - its caller has MaxPerCaller requests in flight (503 unavailable,
//     Retry-After),
//   - its body is larger than MaxBodyBytes (413 too_large) or is not sent
//     within ReadTimeout (408 timeout),
//   - MaxConcurrent requests are in the gateways (503 unavailable,
//     Retry-After).
//
// /healthz answers {"status":"ok"} without a token, as nats-server's
// monitoring /healthz does: it tells nothing but that the process is up.
// Past the checks the request's context carries the gateway.Caller (the
// token's name, or "anonymous" when no token is configured, the remote
// address, and whether it is an admin) and its body is in memory.
package frontdoor

import (
	"net/http"
	"path"
	"strconv"
	"strings"

	"github.com/jido-bus/jido-bus/projects/gateway"
)

// HealthPath is the path the door answers itself.
const HealthPath = "/healthz"

// New returns the door in front of mounts (ServeMux patterns such as
// "/mcp", "/mcp/", "/a2a/" → their handlers; a mount sees the full path,
// no prefix stripped). o must pass Check; New panics on mounts that
// ServeMux refuses or that claim /healthz, which are programming errors.
func New(o Options, mounts map[string]http.Handler) http.Handler {
	o = o.withDefaults()
	d := &door{
		o:       o,
		keys:    newKeyring(o),
		auth:    o.Authenticated(),
		origins: map[string]bool{},
		hosts:   map[string]bool{},
		mux:     http.NewServeMux(),
		public:  http.NewServeMux(),
		slots:   make(chan struct{}, o.MaxConcurrent),
		callers: newCallerSlots(o.MaxPerCaller),
	}
	for _, origin := range o.AllowOrigins {
		if n, err := normalOrigin(origin); err == nil {
			d.origins[n] = true
		}
	}
	for _, h := range o.AllowHosts {
		d.hosts[strings.ToLower(strings.Trim(h, "[]"))] = true
	}
	for _, pattern := range o.Public {
		d.public.Handle(pattern, http.NotFoundHandler())
	}
	for pattern, h := range mounts {
		if strings.TrimSuffix(pattern, "/") == HealthPath {
			panic("frontdoor: the door serves " + HealthPath + " itself; do not mount it")
		}
		d.mux.Handle(pattern, h)
	}
	return d
}

type door struct {
	o       Options
	keys    keyring
	auth    bool
	origins map[string]bool
	hosts   map[string]bool
	mux     *http.ServeMux
	// public matches the requests of Options.Public.
	public  *http.ServeMux
	slots   chan struct{}
	callers *callerSlots
}

func (d *door) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// Every answer, a refusal too, is written within WriteTimeout; this
	// also replaces whatever deadline an earlier request on the same
	// kept-alive connection left behind.
	w = newDeadlineWriter(w, d.o.WriteTimeout)
	w.(*deadlineWriter).arm()
	if !d.hostAllowed(r.Host) {
		d.refuse(w, r, http.StatusForbidden, reasonForbidden, "host "+quote(r.Host)+" is not one this server answers to (a guard against DNS rebinding); reach it by an allowed name, or add the name to the allowed hosts (serve --http-allow-host)")
		return
	}
	if origin, sent := r.Header["Origin"]; sent && !d.originAllowed(origin) {
		d.refuse(w, r, http.StatusForbidden, reasonForbidden, "origin "+quote(strings.Join(origin, ","))+" is not allowed (a guard against DNS rebinding and cross-site requests); add it with serve --http-allow-origin if a browser page of yours must call this server")
		return
	}
	if msg := uncleanPath(r); msg != "" {
		d.refuse(w, r, http.StatusBadRequest, reasonInvalid, msg)
		return
	}
	if r.URL.Path == HealthPath {
		d.health(w, r)
		return
	}
	if r.URL.Query().Has("access_token") {
		d.refuse(w, r, http.StatusBadRequest, reasonInvalid, "a token in the query string is refused (URLs end up in logs and browser histories): send it as the header Authorization: Bearer <token>")
		return
	}
	// A public request without a token has no caller; its share of
	// requests in flight is the one of every such request, under a name
	// no token has (Check refuses an empty one).
	caller, anonymous := gateway.Caller{Remote: r.RemoteAddr}, d.auth && r.Header.Get("Authorization") == "" && d.isPublic(r)
	if !anonymous {
		var ok bool
		if caller, ok = d.authenticate(w, r); !ok {
			return
		}
	}
	// A declared length over the limit is refused whatever the path.
	if r.ContentLength > d.o.MaxBodyBytes {
		d.tooLarge(w, r)
		return
	}
	if _, pattern := d.mux.Handler(r); pattern == "" {
		d.refuse(w, r, http.StatusNotFound, reasonNotFound, "nothing is served at "+quote(r.URL.Path)+": the gateways are /mcp, /mcp/<project>, /a2a/<project> and /healthz")
		return
	}
	// The caller's own share first, held while its body is read: a
	// caller that sends bodies slowly fills its share, not the door.
	if !d.callers.take(caller.Name) {
		w.Header().Set("Retry-After", "1")
		d.refuse(w, r, http.StatusServiceUnavailable, reasonBusy, "caller "+quote(caller.Name)+" has as many requests in flight as one caller may ("+strconv.Itoa(d.o.MaxPerCaller)+"); retry once one has ended")
		return
	}
	defer d.callers.give(caller.Name)
	if !d.readBody(w, r) {
		return
	}
	select {
	case d.slots <- struct{}{}:
		defer func() { <-d.slots }()
	default:
		w.Header().Set("Retry-After", "1")
		d.refuse(w, r, http.StatusServiceUnavailable, reasonBusy, "the server is handling as many requests as it allows; retry in a moment")
		return
	}
	if !anonymous {
		r = r.WithContext(gateway.WithCaller(r.Context(), caller))
	}
	d.mux.ServeHTTP(w, r)
}

// isPublic reports whether r is one of Options.Public.
func (d *door) isPublic(r *http.Request) bool {
	_, pattern := d.public.Handler(r)
	return pattern != ""
}

// authenticate returns the caller of r, or answers 401/403 and false.
func (d *door) authenticate(w http.ResponseWriter, r *http.Request) (gateway.Caller, bool) {
	// Without a token every caller is the same one, and may do all.
	caller := gateway.Caller{Name: anonymous, Remote: r.RemoteAddr, Admin: true}
	if !d.auth {
		return caller, true
	}
	caller.Admin = false
	header := r.Header.Get("Authorization")
	token, ok := bearerToken(header)
	if !ok {
		w.Header().Set("WWW-Authenticate", `Bearer realm="jido-bus"`)
		msg := "a token is required: send the header Authorization: Bearer <token>"
		if header != "" {
			msg = "the Authorization header is not a bearer token: send Authorization: Bearer <token>"
		}
		d.refuse(w, r, http.StatusUnauthorized, ReasonUnauthorized, msg)
		return caller, false
	}
	name, admin, projects, ok := d.keys.match(token)
	if !ok {
		w.Header().Set("WWW-Authenticate", `Bearer realm="jido-bus", error="invalid_token"`)
		d.refuse(w, r, http.StatusUnauthorized, ReasonUnauthorized, "the token is not one this server knows: check the token the client sends against the server's (serve --http-token-env)")
		return caller, false
	}
	if projects != nil {
		p := projectOf(r.URL.Path)
		admitted := false
		for _, q := range projects {
			admitted = admitted || (p != "" && p == q)
		}
		if !admitted {
			d.refuse(w, r, http.StatusForbidden, reasonForbidden, "the token "+quote(name)+" admits only the paths of project "+strings.Join(projects, ", ")+" (/mcp/<project>, /a2a/<project>/…), not "+quote(r.URL.Path))
			return caller, false
		}
	}
	caller.Name, caller.Admin, caller.MaxMode = name, admin, d.o.MaxModes[name]
	return caller, true
}

// uncleanPath says why r's path is refused: one that path.Clean would
// change, or an encoded separator, could name another project to a mount
// than the one the token check saw.
func uncleanPath(r *http.Request) string {
	p := r.URL.Path
	clean := path.Clean(p)
	if strings.HasSuffix(p, "/") && clean != "/" {
		clean += "/"
	}
	raw := strings.ToLower(r.URL.RawPath)
	if clean != p || strings.Contains(p, `\`) || strings.Contains(raw, "%2f") || strings.Contains(raw, "%5c") {
		return "the path " + quote(r.URL.EscapedPath()) + " is not clean (., .., //, an encoded / or \\): send the path itself"
	}
	return ""
}

func (d *door) health(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		d.refuse(w, r, http.StatusMethodNotAllowed, reasonInvalid, HealthPath+" answers GET and HEAD")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	if d.o.Healthy != nil && d.o.Healthy() != nil {
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"status":"unavailable"}` + "\n"))
		return
	}
	_, _ = w.Write([]byte(`{"status":"ok"}` + "\n"))
}

// quote quotes s for a message, cut short: it may be an attacker's.
func quote(s string) string {
	const max = 200
	if len(s) > max {
		s = s[:max] + "…"
	}
	return `"` + strings.ToValidUTF8(strings.ReplaceAll(s, `"`, `\"`), "?") + `"`
}
