package dispatch

import (
	"errors"
	"net/netip"
)

// ErrPrivateAddress is what a webhook connection to an address the
// policy does not allow fails with (test with errors.Is): a private,
// loopback, link-local or otherwise non-public address that is not in
// WebhookPolicy.AllowPrivate.
var ErrPrivateAddress = errors.New("webhook destination address is not allowed")

// nonPublic lists the IP ranges that are not public unicast addresses,
// with the word an error uses for each. The narrower ranges come first, so
// that an address is described by the most specific.
var nonPublic = []struct {
	prefix netip.Prefix
	what   string
}{
	{netip.MustParsePrefix("169.254.169.254/32"), "link-local (the cloud metadata service)"},
	{netip.MustParsePrefix("0.0.0.0/32"), "unspecified"},
	{netip.MustParsePrefix("0.0.0.0/8"), "\"this network\", not a public address"},
	{netip.MustParsePrefix("10.0.0.0/8"), "private"},
	{netip.MustParsePrefix("100.64.0.0/10"), "carrier-grade NAT shared address space"},
	{netip.MustParsePrefix("127.0.0.0/8"), "loopback"},
	{netip.MustParsePrefix("169.254.0.0/16"), "link-local"},
	{netip.MustParsePrefix("172.16.0.0/12"), "private"},
	{netip.MustParsePrefix("192.0.0.0/24"), "IETF protocol assignments, not a public address"},
	{netip.MustParsePrefix("192.168.0.0/16"), "private"},
	{netip.MustParsePrefix("198.18.0.0/15"), "benchmarking, not a public address"},
	{netip.MustParsePrefix("224.0.0.0/4"), "multicast"},
	{netip.MustParsePrefix("255.255.255.255/32"), "broadcast"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved, not a public address"},

	{netip.MustParsePrefix("::/128"), "unspecified"},
	{netip.MustParsePrefix("::1/128"), "loopback"},
	{netip.MustParsePrefix("::/96"), "IPv4-compatible, not a public address"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "private (local-use NAT64)"},
	{netip.MustParsePrefix("100::/64"), "discard-only, not a public address"},
	{netip.MustParsePrefix("2001::/32"), "Teredo, not a public address"},
	{netip.MustParsePrefix("fc00::/7"), "private (unique local)"},
	{netip.MustParsePrefix("fe80::/10"), "link-local"},
	{netip.MustParsePrefix("fec0::/10"), "site-local, not a public address"},
	{netip.MustParsePrefix("ff00::/8"), "multicast"},
}

// Ranges of IPv6 that carry an IPv4 address a gateway connects to: the
// embedded address is what must be public.
var (
	nat64     = netip.MustParsePrefix("64:ff9b::/96") // the address in the last 32 bits
	sixToFour = netip.MustParsePrefix("2002::/16")    // the address in bits 16..47
)

// classify says what kind of non-public address a is, or "" for a public
// unicast address. IPv4-mapped IPv6 addresses are classified as the IPv4
// address they map, and NAT64 and 6to4 addresses as the IPv4 address they
// embed, since that is where a connection to them ends up.
func classify(a netip.Addr) string {
	a = a.Unmap()
	if a.Zone() != "" {
		return "zoned (link-local), not a public address"
	}
	if a.Is6() {
		b := a.As16()
		switch {
		case nat64.Contains(a):
			if what := classify(netip.AddrFrom4([4]byte(b[12:16]))); what != "" {
				return what + " (inside a NAT64 address)"
			}
		case sixToFour.Contains(a):
			if what := classify(netip.AddrFrom4([4]byte(b[2:6]))); what != "" {
				return what + " (inside a 6to4 address)"
			}
		}
	}
	for _, r := range nonPublic {
		if r.prefix.Contains(a) {
			return r.what
		}
	}
	return ""
}
