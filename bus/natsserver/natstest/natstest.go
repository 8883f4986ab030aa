// Package natstest starts embedded NATS servers for tests, the way
// nats-server's own tests do: loopback, a random port, no signals, JetStream
// storage in the test's temporary directory, stopped (and waited for) when
// the test ends so that goroutine-leak checks stay clean.
package natstest

import (
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/bus/natsserver"
)

// RunServer starts a server on 127.0.0.1 and a random port; it is shut down
// when tb ends. opts may adjust the options first.
func RunServer(tb testing.TB, opts ...func(*natsserver.Options)) *natsserver.Server {
	tb.Helper()
	o := natsserver.Options{Port: natsserver.RandomPort, StoreDir: tb.TempDir()}
	for _, f := range opts {
		f(&o)
	}
	s, err := natsserver.Start(o)
	if err != nil {
		tb.Fatalf("start NATS: %v", err)
	}
	tb.Cleanup(func() { _ = s.Close() })
	return s
}

// Connect opens a TCP client connection to s, closed when tb ends.
func Connect(tb testing.TB, s *natsserver.Server, opts ...nats.Option) *nats.Conn {
	tb.Helper()
	nc, err := nats.Connect(s.ClientURL(), opts...)
	if err != nil {
		tb.Fatalf("connect to %s: %v", s.ClientURL(), err)
	}
	tb.Cleanup(nc.Close)
	return nc
}
