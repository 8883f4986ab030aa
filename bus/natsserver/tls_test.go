package natsserver_test

import (
	"strings"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/bus/natsserver"
	"github.com/jido-bus/jido-bus/bus/natsserver/natstest"
)

func TestTLS(t *testing.T) {
	pki := natstest.NewPKI(t, "127.0.0.1", "localhost")
	srv := natstest.RunServer(t, func(o *natsserver.Options) {
		o.TLSCert, o.TLSKey = pki.ServerCert, pki.ServerKey
	})
	if nc, err := nats.Connect(srv.ClientURL()); err == nil {
		nc.Close()
		t.Fatal("connected without trusting the server's CA")
	}
	natstest.Connect(t, srv, nats.RootCAs(pki.CA))
	inproc, err := srv.Connect()
	if err != nil {
		t.Fatalf("in-process connection with TLS on: %v", err)
	}
	inproc.Close()
}

func TestTLSVerifyClients(t *testing.T) {
	pki := natstest.NewPKI(t, "127.0.0.1")
	srv := natstest.RunServer(t, func(o *natsserver.Options) {
		o.TLSCert, o.TLSKey, o.TLSCA, o.TLSVerify = pki.ServerCert, pki.ServerKey, pki.CA, true
	})
	if nc, err := nats.Connect(srv.ClientURL(), nats.RootCAs(pki.CA)); err == nil {
		nc.Close()
		t.Fatal("connected without a client certificate")
	}
	natstest.Connect(t, srv, nats.RootCAs(pki.CA), nats.ClientCert(pki.ClientCert, pki.ClientKey))
	inproc, err := srv.Connect()
	if err != nil {
		t.Fatalf("in-process connection with client certificates required: %v", err)
	}
	inproc.Close()
}

func TestTLSBadFiles(t *testing.T) {
	pki := natstest.NewPKI(t, "127.0.0.1")
	for _, o := range []natsserver.Options{
		{TLSCert: pki.ServerCert},
		{TLSCert: pki.ServerCert, TLSKey: pki.ServerCert + ".missing"},
		{TLSCert: pki.ServerCert, TLSKey: pki.ServerKey, TLSVerify: true},
	} {
		o.Port, o.NoJetStream = natsserver.RandomPort, true
		s, err := natsserver.Start(o)
		if err == nil {
			_ = s.Close()
			t.Fatalf("Start(%+v) succeeded", o)
		}
		if !strings.Contains(err.Error(), "tls") && !strings.Contains(err.Error(), "TLS") {
			t.Fatalf("error does not say TLS: %v", err)
		}
	}
}
