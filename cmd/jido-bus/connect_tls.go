package main

import (
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/nats-io/nats.go"
)

// tlsAdvice says why a TLS connection to url could not be made and what
// to give instead. A TLS failure is a connection that cannot be made, so
// connectError types it unavailable (exit 4), as the NATS CLI treats it:
// retrying with the right files is the fix, not changing the request.
func tlsAdvice(url string, s connSettings, err error) string {
	ca, cert := "--tlsca CA-FILE (or NATS_CA, or the NATS context's ca)", "--tlscert and --tlskey (or NATS_CERT and NATS_KEY, or the NATS context's cert and key)"
	var unknown x509.UnknownAuthorityError
	var host x509.HostnameError
	var invalid x509.CertificateInvalidError
	switch {
	case errors.Is(err, nats.ErrSecureConnWanted):
		return fmt.Sprintf("the NATS server at %s does not offer TLS, but TLS files were given (%s): point -s/--server at the node's TLS listener, or drop them", url, s.tlsSources())
	case errors.Is(err, nats.ErrSecureConnRequired):
		return fmt.Sprintf("the NATS server at %s requires TLS: give %s, and %s if it verifies clients", url, ca, cert)
	case errors.As(err, &unknown):
		if s.ca != "" {
			return fmt.Sprintf("TLS: the server certificate at %s is not signed by the CA in %s (from %s): give the CA that signed the node's certificate (%v)", url, s.ca, s.from["ca"], err)
		}
		return fmt.Sprintf("TLS: the server certificate at %s is signed by an authority this client does not trust (%v): give %s", url, err, ca)
	case errors.As(err, &host):
		return fmt.Sprintf("TLS: the server certificate at %s is not valid for that host name (%v): connect by a name the certificate holds", url, err)
	case errors.As(err, &invalid):
		return fmt.Sprintf("TLS: the server certificate at %s is not valid (%v): the node's operator must renew or fix it", url, err)
	case s.cert == "" && (strings.Contains(err.Error(), "certificate required") || strings.Contains(err.Error(), "after TLS handshake")):
		// TLS 1.3 sends the server's refusal of a missing client
		// certificate after the handshake: depending on timing the client
		// reads the alert ("certificate required") or finds the
		// connection closed.
		return fmt.Sprintf("TLS: the NATS server at %s requires a client certificate and none was given (%v): give %s", url, err, cert)
	case s.cert != "":
		return fmt.Sprintf("TLS to %s failed (%v): is the client certificate %s (from %s) signed by a CA the server trusts? Check %s and %s", url, err, s.cert, s.from["cert"], cert, ca)
	}
	return fmt.Sprintf("TLS to %s failed (%v): check %s, and %s if the server verifies clients", url, err, ca, cert)
}

// isTLSError reports whether err is a TLS connection that could not be
// made: a failed handshake, a TLS alert from the server after it (a
// refused client certificate under TLS 1.3 arrives on the first read, as
// a "remote error", not wrapped in nats.ErrTLS), or a server and client
// that disagree on TLS.
func isTLSError(err error) bool {
	if errors.Is(err, nats.ErrTLS) || errors.Is(err, nats.ErrSecureConnWanted) || errors.Is(err, nats.ErrSecureConnRequired) {
		return true
	}
	oe, ok := errors.AsType[*net.OpError](err)
	return ok && oe.Op == "remote error" && strings.Contains(oe.Err.Error(), "tls:")
}

// tlsSources names where the TLS files in s came from.
func (s connSettings) tlsSources() string {
	var from []string
	for _, k := range []string{"ca", "cert"} {
		if f, ok := s.from[k]; ok {
			from = append(from, f)
		}
	}
	return strings.Join(from, ", ")
}
