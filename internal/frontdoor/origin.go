package frontdoor

import (
	"net"
	"strings"
)

// originAllowed says whether the Origin header values are allowed: each
// must be in the allow-list ("null", sent by sandboxed and file pages,
// never is).
func (d *door) originAllowed(values []string) bool {
	if len(values) != 1 {
		return false
	}
	n, err := normalOrigin(values[0])
	return err == nil && d.origins[n]
}

// hostAllowed says whether the Host header names an allowed host; any
// host is when no list is set.
func (d *door) hostAllowed(hostport string) bool {
	if len(d.hosts) == 0 {
		return true
	}
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	return d.hosts[strings.ToLower(strings.Trim(host, "[]"))]
}
