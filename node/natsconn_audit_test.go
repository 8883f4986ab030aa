package node

import (
	"context"
	"strings"
	"testing"

	"github.com/jido-bus/jido-bus/bus/natsserver"
	"github.com/jido-bus/jido-bus/bus/natsserver/natstest"
)

// TestTLSToNATSURLWithoutClientCertSaysWhich: a server that requires a
// client certificate answers "tls: certificate required"; the node's
// error used to suggest only --tlsca (which it had) and credentials, so
// the operator was not told of --tlscert/--tlskey.
func TestTLSToNATSURLWithoutClientCertSaysWhich(t *testing.T) {
	pki := natstest.NewPKI(t, "127.0.0.1")
	srv := natstest.RunServer(t, func(o *natsserver.Options) {
		o.TLSCert, o.TLSKey, o.TLSCA, o.TLSVerify = pki.ServerCert, pki.ServerKey, pki.CA, true
	})
	_, err := Start(context.Background(), Config{DataDir: t.TempDir(), NoSync: true, NATS: NATSConfig{URL: srv.ClientURL(), TLS: TLSFiles{CA: pki.CA}}})
	// Under TLS 1.3 the server's refusal comes after the handshake: the
	// client reads its alert ("certificate required") or, as often, finds
	// the connection closed ("after TLS handshake"); either is right.
	refused := err != nil && (strings.Contains(err.Error(), "certificate required") || strings.Contains(err.Error(), "after TLS handshake"))
	if !refused || !strings.Contains(err.Error(), "--tlscert") || !strings.Contains(err.Error(), "--tlskey") {
		t.Fatalf("start without a client certificate: %v", err)
	}
}
