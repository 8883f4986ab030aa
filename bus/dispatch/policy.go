package dispatch

import (
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// WebhookPolicy is the operator's rule for where webhooks may go. Agents
// choose their webhook targets in their options, which any caller allowed
// to start an agent writes; the policy is what keeps such a caller from
// making the node POST to an address of the operator's network. The zero
// value allows no destination at all. NewWebhookGuard compiles it.
//
// A destination pattern (Allow) has the form
//
//		scheme://host[:port][/path]
//
//	  - scheme is http or https, and a URL must have the same one;
//	  - host is a DNS name, matched exactly (case does not matter; the name
//	    is written in ASCII, an IDN in its xn-- form, without a trailing
//	    dot), or "*.name", which matches every name below name (a.name,
//	    a.b.name) but not name itself; or an IP address: IPv4 in
//	    dotted-decimal form, IPv6 in brackets;
//	  - port is matched exactly; without one, the scheme's default (80, 443);
//	  - path, when given and not "/", is a prefix the URL's path must start
//	    with, on a segment boundary: "/in" matches /in and /in/x, not /inx.
//
// Nothing else is part of a pattern: no user info, query or fragment, and
// no other wildcard. A URL with user info is never allowed (credentials in
// an agent's options end up in the event log and the node's log); nor is a
// URL whose host is a number in any form but dotted-decimal IPv4
// (http://2130706433/, http://0x7f.1/), or whose path has dot segments
// (also as "..;x", which servlet containers read as ".."), an encoded '/'
// or '\', or an encoded '%' (a double encoding), which a receiver may
// resolve to another path.
//
// Private, loopback, link-local (169.254.169.254, the cloud metadata
// service, among them), unspecified, multicast, carrier-grade NAT, unique
// local IPv6 and other non-public addresses (also in their IPv4-mapped,
// NAT64 and 6to4 spellings) are refused unless they lie in a network of
// AllowPrivate. This is checked on the address a connection is about to
// be made to, after DNS resolution, so a name that matches Allow but
// resolves to such an address (DNS rebinding included) gets nothing.
type WebhookPolicy struct {
	// Allow lists the destination patterns a webhook URL must match.
	Allow []string
	// AllowPrivate lists the networks (CIDR, or a single address) of
	// non-public addresses that a destination may resolve to; any other
	// such address is refused even when the URL matches Allow.
	AllowPrivate []string
}

// destination is a webhook URL or an Allow pattern, parsed and made
// canonical: what matching compares.
type destination struct {
	scheme   string
	host     string     // a lower-case DNS name, without "*." for a wildcard
	wildcard bool       // host is "*.host"
	addr     netip.Addr // the host's address when it is an IP literal (unmapped)
	port     int
	path     []string // the decoded path segments; empty for any path
}

func defaultPort(scheme string) int {
	if scheme == "https" {
		return 443
	}
	return 80
}

// parseDestination parses a webhook URL (pattern false) or an Allow
// pattern (pattern true). The error says what is wrong in words for the
// one who wrote it; it never repeats a password.
func parseDestination(raw string, pattern bool) (destination, error) {
	if raw == "" {
		return destination{}, fmt.Errorf("is empty")
	}
	u, err := url.Parse(raw)
	if err != nil || u.Opaque != "" || u.Host == "" {
		if pattern { // the guard says what a pattern looks like
			return destination{}, fmt.Errorf("is not a URL")
		}
		return destination{}, fmt.Errorf("is not of the form scheme://host[:port][/path], e.g. https://hooks.example.com")
	}
	d := destination{scheme: u.Scheme}
	if d.scheme != "http" && d.scheme != "https" {
		return d, fmt.Errorf("has scheme %q; want http or https", u.Scheme)
	}
	if u.User != nil {
		return d, fmt.Errorf("has user info; credentials in a webhook URL would be stored in the event log and logged: the receiver checks the Jido-Signature header instead")
	}
	if pattern {
		switch {
		case u.RawQuery != "" || u.ForceQuery:
			return d, fmt.Errorf("has a query")
		case u.Fragment != "" || strings.Contains(raw, "#"):
			return d, fmt.Errorf("has a fragment")
		}
	}
	if err := d.parseHost(u, pattern); err != nil {
		return d, err
	}
	d.port = defaultPort(d.scheme)
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return d, fmt.Errorf("has port %q; want 1..65535", p)
		}
		d.port = n
	}
	segs, err := pathSegments(u)
	if err != nil {
		return d, err
	}
	// A pattern's path is a prefix, not a glob: a '*' there would read as
	// one to an operator and match nothing they meant.
	if pattern && strings.Contains(u.Path, "*") {
		return d, fmt.Errorf("has a '*' in its path, but a pattern's path is a prefix with no wildcard in its path: https://hooks.example.com/in matches /in and everything below it")
	}
	d.path = segs
	return d, nil
}

func (d *destination) parseHost(u *url.URL, pattern bool) error {
	host := u.Hostname()
	if strings.HasPrefix(u.Host, "[") {
		a, err := netip.ParseAddr(host)
		if err != nil {
			return fmt.Errorf("has host [%s], which is not an IPv6 address", host)
		}
		if a.Zone() != "" {
			return fmt.Errorf("has an IPv6 address with a zone (%%25%s); a webhook cannot name an interface", a.Zone())
		}
		d.addr = a.Unmap()
		return nil
	}
	for i := 0; i < len(host); i++ {
		if host[i] >= 0x80 {
			return fmt.Errorf("has the international host name %q; write it in its ASCII (xn--) form", host)
		}
	}
	host = strings.ToLower(host)
	if pattern {
		if rest, ok := strings.CutPrefix(host, "*."); ok {
			if strings.Count(rest, ".") < 1 || strings.Contains(rest, "*") {
				return fmt.Errorf("has the wildcard host %q; a wildcard is one leading \"*.\" before a name of at least two labels, e.g. *.example.com", host)
			}
			d.wildcard, host = true, rest
		}
		if strings.Contains(host, "*") {
			return fmt.Errorf("has the wildcard host %q; a wildcard is one leading \"*.\" before a name of at least two labels, e.g. *.example.com", host)
		}
	}
	if strings.HasSuffix(host, ".") {
		return fmt.Errorf("has the host %q with a trailing dot; write it without", host)
	}
	labels := strings.Split(host, ".")
	for _, l := range labels {
		if l == "" || len(l) > 63 {
			return fmt.Errorf("has the host %q, which is not a DNS name", host)
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
				return fmt.Errorf("has the host %q, which is not a DNS name", host)
			}
		}
	}
	// A name whose last label is a number is an IPv4 address to some
	// resolvers, in forms (2130706433, 0x7f.1, 0177.0.0.1) that would slip
	// past a comparison with the dotted form: only that form is taken.
	if last := labels[len(labels)-1]; isNumeric(last) {
		if d.wildcard {
			return fmt.Errorf("has the wildcard host %q over an address", host)
		}
		a, err := netip.ParseAddr(host)
		if err != nil || !a.Is4() {
			return fmt.Errorf("has the host %q, which looks like an IPv4 address but is not in dotted-decimal form (as 192.0.2.7)", host)
		}
		d.addr = a
		return nil
	}
	d.host = host
	return nil
}

// isNumeric reports whether a DNS label is a number in decimal, octal or
// hex notation, as IPv4 parsers read it.
func isNumeric(label string) bool {
	if h, ok := strings.CutPrefix(label, "0x"); ok {
		label = h
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
				return false
			}
		}
		return true
	}
	for i := 0; i < len(label); i++ {
		if label[i] < '0' || label[i] > '9' {
			return false
		}
	}
	return true
}

// pathSegments decodes the URL's path segment by segment, refusing what
// a receiver might read as a different path than the one matched.
func pathSegments(u *url.URL) ([]string, error) {
	var segs []string
	for _, raw := range strings.Split(strings.TrimPrefix(u.EscapedPath(), "/"), "/") {
		s, err := url.PathUnescape(raw)
		if err != nil {
			return nil, fmt.Errorf("has a malformed path")
		}
		// Servlet containers (Tomcat, Jetty) and the frameworks on them
		// drop a segment's ";parameters" before resolving dot segments:
		// to them /in/..;/admin is /admin.
		name, _, _ := strings.Cut(s, ";")
		switch {
		case name == "." || name == "..":
			return nil, fmt.Errorf("has a dot segment (%q) in its path", raw)
		case strings.ContainsAny(s, "/\\"):
			return nil, fmt.Errorf("has an encoded '/' or '\\' in its path segment %q", raw)
		case strings.Contains(s, "%"):
			// A receiver, or a proxy before it, that decodes once more
			// would read %252e%252e as "..", %252f as '/'.
			return nil, fmt.Errorf("has a path segment encoded twice (%q); write the path with each character encoded once", raw)
		}
		segs = append(segs, s)
	}
	// A trailing slash adds an empty segment, meaningless to a prefix.
	for len(segs) > 0 && segs[len(segs)-1] == "" {
		segs = segs[:len(segs)-1]
	}
	return segs, nil
}

// matches reports whether the URL u matches the pattern p.
func (p destination) matches(u destination) bool {
	if p.scheme != u.scheme || p.port != u.port {
		return false
	}
	switch {
	case p.addr.IsValid() || u.addr.IsValid():
		if p.addr != u.addr {
			return false
		}
	case p.wildcard:
		if !strings.HasSuffix(u.host, "."+p.host) {
			return false
		}
	case p.host != u.host:
		return false
	}
	if len(u.path) < len(p.path) {
		return false
	}
	for i, s := range p.path {
		if u.path[i] != s {
			return false
		}
	}
	return true
}

func (p destination) String() string {
	host := p.host
	switch {
	case p.addr.Is6():
		host = "[" + p.addr.String() + "]"
	case p.addr.IsValid():
		host = p.addr.String()
	case p.wildcard:
		host = "*." + host
	}
	return fmt.Sprintf("%s://%s:%d/%s", p.scheme, host, p.port, strings.Join(p.path, "/"))
}
