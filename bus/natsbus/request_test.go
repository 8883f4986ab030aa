package natsbus

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/natsserver/natstest"
)

// serveAPI answers area.verb under prefix on nc with fn, as a node does.
func serveAPI(t *testing.T, nc *nats.Conn, prefix, area, verb string, fn APIFunc) {
	t.Helper()
	s, err := bus.NewSubjects(prefix)
	if err != nil {
		t.Fatal(err)
	}
	b := New(nc, Options{Subjects: s})
	t.Cleanup(func() { _ = b.Shutdown(context.Background()) })
	if err := b.HandleAPI(s.API(area, verb), fn); err != nil {
		t.Fatal(err)
	}
	if err := b.HandleAPI(s.Ping(), func(context.Context, []byte) (any, error) { return nil, nil }); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
}

func requester(t *testing.T, nc *nats.Conn, prefix string, d *Denials) Requester {
	t.Helper()
	s, err := bus.NewSubjects(prefix)
	if err != nil {
		t.Fatal(err)
	}
	return Requester{NC: nc, Subjects: s, Timeout: 5 * time.Second, Denials: d}
}

func wantBusError(t *testing.T, err error, typ string, says ...string) {
	t.Helper()
	var be *bus.Error
	if !errors.As(err, &be) {
		t.Fatalf("err = %v (%T), want a *bus.Error of type %s", err, err, typ)
	}
	if be.Type != typ {
		t.Fatalf("err type = %s (%v), want %s", be.Type, err, typ)
	}
	for _, s := range says {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("err = %q, want it to say %q", err, s)
		}
	}
}

func TestRequesterReturnsTheReplyAndItsError(t *testing.T) {
	srv := natstest.RunServer(t)
	serveAPI(t, natstest.Connect(t, srv), "jido", "agent", "state", func(_ context.Context, req []byte) (any, error) {
		if string(req) == `{"id":"nope"}` {
			return nil, bus.Errorf(bus.ReasonNotFound, "agent nope does not exist")
		}
		return map[string]string{"id": "c1"}, nil
	})
	r := requester(t, natstest.Connect(t, srv), "jido", nil)
	var got struct{ ID string }
	if err := r.Call(t.Context(), "agent", "state", map[string]string{"id": "c1"}, &got); err != nil || got.ID != "c1" {
		t.Fatalf("Call = %+v, %v", got, err)
	}
	err := r.Call(t.Context(), "agent", "state", map[string]string{"id": "nope"}, &got)
	if be, ok := errors.AsType[*bus.Error](err); !ok || be.Type != bus.ReasonNotFound || be.Message != "agent nope does not exist" {
		t.Fatalf("err = %#v, want the reply's own *bus.Error", err)
	}
}

func TestRequesterNoResponders(t *testing.T) {
	srv := natstest.RunServer(t)
	nodeConn := natstest.Connect(t, srv)
	serveAPI(t, nodeConn, "jido", "agent", "state", func(context.Context, []byte) (any, error) { return nil, nil })
	nc := natstest.Connect(t, srv)

	t.Run("wrong prefix", func(t *testing.T) {
		err := requester(t, nc, "prod", nil).Call(t.Context(), "agent", "state", nil, nil)
		wantBusError(t, err, bus.ReasonUnavailable, "prod.api.agent.state", "one answers under --prefix jido", "--prefix prod a mistake")
	})
	t.Run("subject not served", func(t *testing.T) {
		err := requester(t, nc, "jido", nil).Call(t.Context(), "log", "show", nil, nil)
		wantBusError(t, err, bus.ReasonUnavailable, "answers under --prefix jido but nothing serves jido.api.log.show")
	})
	t.Run("no node", func(t *testing.T) {
		other := natstest.RunServer(t)
		err := requester(t, natstest.Connect(t, other), "jido", nil).Call(t.Context(), "agent", "state", nil, nil)
		wantBusError(t, err, bus.ReasonUnavailable, "no jido-bus node answers on jido.api.agent.state", "is one running, and does it serve --prefix jido?")
		if !errors.Is(err, ErrNoNode) {
			t.Errorf("err = %v, want it to match ErrNoNode", err)
		}
	})
}

func TestRequesterTimeoutNamesSubjectAndTimeout(t *testing.T) {
	srv := natstest.RunServer(t)
	silent := natstest.Connect(t, srv)
	sub, err := silent.Subscribe("jido.api.agent.state", func(*nats.Msg) {}) // never answers
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	if err := silent.Flush(); err != nil {
		t.Fatal(err)
	}
	r := requester(t, natstest.Connect(t, srv), "jido", nil)
	r.Timeout = 50 * time.Millisecond
	err = r.Call(t.Context(), "agent", "state", nil, nil)
	wantBusError(t, err, bus.ReasonUnavailable, "no answer on jido.api.agent.state", "within 50ms", "--timeout")
}

func TestRequesterClosedConnection(t *testing.T) {
	srv := natstest.RunServer(t)
	nc := natstest.Connect(t, srv)
	nc.Close()
	err := requester(t, nc, "jido", nil).Call(t.Context(), "agent", "state", nil, nil)
	wantBusError(t, err, bus.ReasonUnavailable, "connection", "closed")
}

// runServerWithUsers starts nats-server with users and their permissions,
// which bus/natsserver does not configure.
func runServerWithUsers(t *testing.T, users []*server.User) *server.Server {
	t.Helper()
	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true, Users: users})
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats-server not ready")
	}
	t.Cleanup(func() {
		s.Shutdown()
		s.WaitForShutdown()
	})
	return s
}

func TestRequesterPermissionViolationIsForbiddenAtOnce(t *testing.T) {
	srv := runServerWithUsers(t, []*server.User{
		{Username: "node", Password: "n"},
		{Username: "alice", Password: "a", Permissions: &server.Permissions{
			Publish: &server.SubjectPermission{Allow: []string{"jido.api.agent.state", "jido.api.ping"}},
		}},
		{Username: "bob", Password: "b", Permissions: &server.Permissions{
			Publish:   &server.SubjectPermission{Allow: []string{"jido.api.>"}},
			Subscribe: &server.SubjectPermission{Deny: []string{"_INBOX.>"}},
		}},
	})
	connect := func(user, pass string, d *Denials) *nats.Conn {
		opts := []nats.Option{nats.UserInfo(user, pass)}
		if d != nil {
			opts = append(opts, nats.ErrorHandler(d.Handle))
		}
		nc, err := nats.Connect(srv.ClientURL(), opts...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		return nc
	}
	serveAPI(t, connect("node", "n", nil), "jido", "agent", "stop", func(context.Context, []byte) (any, error) { return nil, nil })

	t.Run("publish denied", func(t *testing.T) {
		d := &Denials{User: "alice"}
		r := requester(t, connect("alice", "a", d), "jido", d)
		// A timeout far beyond the test's own would make a missed denial
		// hang the test instead of passing it.
		r.Timeout = time.Hour
		err := r.Call(t.Context(), "agent", "stop", map[string]string{"id": "c1"}, nil)
		wantBusError(t, err, bus.ReasonForbidden, "user alice may not publish to jido.api.agent.stop: its role does not allow agent.stop")
		// The connection stays usable for what alice may do.
		if err := r.Do(t.Context(), "jido.api.ping", nil, nil); err != nil {
			t.Fatalf("ping after a denial: %v", err)
		}
	})
	t.Run("reply inbox denied", func(t *testing.T) {
		d := &Denials{User: "bob"}
		r := requester(t, connect("bob", "b", d), "jido", d)
		r.Timeout = time.Hour
		err := r.Call(t.Context(), "agent", "stop", nil, nil)
		wantBusError(t, err, bus.ReasonForbidden, "user bob may not subscribe to its reply inbox", "_INBOX")
	})
}
