package natsserver_test

import (
	"strings"
	"testing"

	"github.com/nats-io/nats.go"
	"go.uber.org/goleak"

	"github.com/jido-bus/jido-bus/bus/natsserver"
	"github.com/jido-bus/jido-bus/bus/natsserver/natstest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestEmbeddedServerWithJetStream(t *testing.T) {
	srv := natstest.RunServer(t)
	if !strings.HasPrefix(srv.ClientURL(), "nats://127.0.0.1:") {
		t.Fatalf("ClientURL = %s", srv.ClientURL())
	}
	nc := natstest.Connect(t, srv)
	js, err := nc.JetStream()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.AccountInfo(); err != nil {
		t.Fatalf("JetStream is not on: %v", err)
	}
	inproc, err := srv.Connect()
	if err != nil {
		t.Fatal(err)
	}
	defer inproc.Close()
	sub, err := nc.SubscribeSync("x")
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := inproc.Publish("x", []byte("hi")); err != nil {
		t.Fatal(err)
	}
	if m, err := sub.NextMsg(5e9); err != nil || string(m.Data) != "hi" {
		t.Fatalf("in-process publish not seen over TCP: %v", err)
	}
}

func TestAuth(t *testing.T) {
	cases := []struct {
		name  string
		opts  func(*natsserver.Options)
		right nats.Option
		wrong nats.Option
	}{
		{"user and password", func(o *natsserver.Options) { o.User, o.Password = "u", "p" }, nats.UserInfo("u", "p"), nats.UserInfo("u", "x")},
		{"token", func(o *natsserver.Options) { o.Token = "s3cret" }, nats.Token("s3cret"), nats.Token("nope")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := natstest.RunServer(t, c.opts)
			if nc, err := nats.Connect(srv.ClientURL()); err == nil {
				nc.Close()
				t.Fatal("connected without credentials")
			}
			if nc, err := nats.Connect(srv.ClientURL(), c.wrong); err == nil {
				nc.Close()
				t.Fatal("connected with wrong credentials")
			}
			natstest.Connect(t, srv, c.right)
			inproc, err := srv.Connect() // the server's own credentials
			if err != nil {
				t.Fatal(err)
			}
			inproc.Close()
		})
	}
}

func TestStartRejectsBadOptions(t *testing.T) {
	for _, o := range []natsserver.Options{
		{Port: natsserver.RandomPort, User: "u"},
		{Port: natsserver.RandomPort, Password: "p"},
		{Port: natsserver.RandomPort, User: "u", Password: "p", Token: "t"},
	} {
		if s, err := natsserver.Start(o); err == nil {
			_ = s.Close()
			t.Errorf("Start(%+v) succeeded", o)
		}
	}
}

func TestPortInUse(t *testing.T) {
	srv := natstest.RunServer(t)
	port := srv.Addr().String()[strings.LastIndex(srv.Addr().String(), ":")+1:]
	var p int
	for _, c := range port {
		p = p*10 + int(c-'0')
	}
	s, err := natsserver.Start(natsserver.Options{Port: p, NoJetStream: true})
	if err == nil {
		_ = s.Close()
		t.Fatal("a second server started on a used port")
	}
}
