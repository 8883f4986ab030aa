package natsbus

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/bus"
)

// TestRequesterClosedByRefusedCredentials: a connection the server closed
// because it no longer accepts the credentials (a password changed, a
// user removed, and the reload dropped the client) is an authorization
// failure, forbidden like a refused first connect, not a node that is not
// running.
func TestRequesterClosedByRefusedCredentials(t *testing.T) {
	srv := runServerWithUsers(t, []*server.User{{Username: "alice", Password: "a"}})
	closed := make(chan struct{})
	nc, err := nats.Connect(srv.ClientURL(), nats.UserInfo("alice", "a"), nats.ReconnectWait(10*time.Millisecond),
		nats.ClosedHandler(func(*nats.Conn) { close(closed) }), nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) {}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	port := srv.Addr().(*net.TCPAddr).Port
	opts := &server.Options{Host: "127.0.0.1", Port: port, NoLog: true, NoSigs: true,
		Users: []*server.User{{Username: "alice", Password: "changed"}}}
	if err := srv.ReloadOptions(opts); err != nil {
		t.Fatal(err)
	}
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not close the connection whose password changed")
	}
	t.Logf("last error: %v", nc.LastError())
	err = requester(t, nc, "jido", nil).Call(t.Context(), "agent", "state", nil, nil)
	wantBusError(t, err, bus.ReasonForbidden, "authorization failed")
}

// TestRequesterInFlightWhenCredentialsAreRefused: a request under way when
// the server drops the connection for its credentials ends forbidden,
// "authorization failed", not an internal "connection closed".
func TestRequesterInFlightWhenCredentialsAreRefused(t *testing.T) {
	users := []*server.User{{Username: "node", Password: "n"}, {Username: "alice", Password: "a"}}
	srv := runServerWithUsers(t, users)
	node, err := nats.Connect(srv.ClientURL(), nats.UserInfo("node", "n"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(node.Close)
	arrived, release := make(chan struct{}, 1), make(chan struct{})
	serveAPI(t, node, "jido", "agent", "state", func(context.Context, []byte) (any, error) {
		arrived <- struct{}{}
		<-release // no answer until the test is over
		return nil, nil
	})
	t.Cleanup(func() { close(release) }) // before serveAPI's Shutdown waits for the handler
	nc, err := nats.Connect(srv.ClientURL(), nats.UserInfo("alice", "a"), nats.ReconnectWait(10*time.Millisecond),
		nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) {}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	r := requester(t, nc, "jido", nil)
	r.Timeout = time.Hour
	done := make(chan error, 1)
	go func() { done <- r.Call(t.Context(), "agent", "state", nil, nil) }()
	<-arrived
	port := srv.Addr().(*net.TCPAddr).Port
	if err := srv.ReloadOptions(&server.Options{Host: "127.0.0.1", Port: port, NoLog: true, NoSigs: true,
		Users: []*server.User{{Username: "node", Password: "n"}, {Username: "alice", Password: "changed"}}}); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		wantBusError(t, err, bus.ReasonForbidden, "authorization failed")
	case <-time.After(30 * time.Second):
		t.Fatal("the request outlived its connection")
	}
}
