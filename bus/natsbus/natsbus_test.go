package natsbus

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/codec"
	"github.com/jido-bus/jido-bus/bus/natsserver/natstest"
	"github.com/jido-bus/jido-bus/internal/testkit"
)

// fixture is a Bus on an embedded server with a client connection to play
// the outside world, and a subscription that collects dead letters.
type fixture struct {
	bus    *Bus
	client *nats.Conn
	dlq    chan *nats.Msg
	mu     sync.Mutex
	filed  []DeadLetter
}

func newFixture(t *testing.T, opts Options) *fixture {
	t.Helper()
	srv := natstest.RunServer(t)
	nc := natstest.Connect(t, srv)
	f := &fixture{client: natstest.Connect(t, srv), dlq: make(chan *nats.Msg, 64)}
	opts.OnDeadLetter = func(d DeadLetter) {
		f.mu.Lock()
		f.filed = append(f.filed, d)
		f.mu.Unlock()
	}
	f.bus = New(nc, opts)
	t.Cleanup(func() {
		if err := f.bus.Shutdown(context.Background()); err != nil {
			t.Error(err)
		}
	})
	sub, err := f.client.ChanSubscribe("jido.dlq.>", f.dlq)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	if err := f.client.Flush(); err != nil {
		t.Fatal(err)
	}
	return f
}

// awaitFiled waits until OnDeadLetter has seen n dead letters (it runs
// after the dead letter is published, so a subscriber may see one first)
// and returns what it saw.
func (f *fixture) awaitFiled(t *testing.T, n int) []DeadLetter {
	t.Helper()
	var filed []DeadLetter
	testkit.Eventually(t, fmt.Sprintf("%d dead letters filed", n), func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		filed = slices.Clone(f.filed)
		return len(filed) >= n
	})
	return filed
}

func (f *fixture) nextDeadLetter(t *testing.T) *nats.Msg {
	t.Helper()
	select {
	case m := <-f.dlq:
		return m
	case <-time.After(5 * time.Second):
		t.Fatal("no dead letter within 5s")
		return nil
	}
}

func binaryMsg(t *testing.T, subject string, mutate func(*bus.Signal)) *nats.Msg {
	t.Helper()
	s, err := bus.NewSignal(subject[strings.LastIndex(subject, ".")+1:], "test", map[string]int{"by": 2})
	if err != nil {
		t.Fatal(err)
	}
	if mutate != nil {
		mutate(&s)
	}
	msg, err := codec.Encode(subject, &s, codec.Binary)
	if err != nil {
		t.Fatal(err)
	}
	return msg
}

func TestDeliversValidSignals(t *testing.T) {
	f := newFixture(t, Options{})
	got := make(chan *Delivery, 1)
	if err := f.bus.HandleSignals(bus.KindAgent, func(_ context.Context, d *Delivery) {
		got <- d
		d.Respond(map[string]any{"seen": d.Signal.ID()})
	}); err != nil {
		t.Fatal(err)
	}
	msg := binaryMsg(t, "jido.agent.team/c1.increment", nil)
	reply, err := f.client.RequestMsg(msg, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	d := <-got
	if d.Address.AgentID != "team/c1" || d.Signal.Type() != "increment" || !d.IsCall() || d.Mode != codec.Binary {
		t.Fatalf("delivery = %+v", d.Address)
	}
	want := `{"ok":true,"seen":"` + d.Signal.ID() + `"}`
	if string(reply.Data) != want {
		t.Fatalf("reply = %s, want %s", reply.Data, want)
	}
	if st := f.bus.Stats(); st.Received != 1 || st.Rejected != 0 {
		t.Fatalf("stats = %+v", st)
	}
}

func TestMiddlewareOrder(t *testing.T) {
	f := newFixture(t, Options{})
	var mu sync.Mutex
	var order []string
	mark := func(name string) Middleware {
		return func(next Handler) Handler {
			return func(ctx context.Context, d *Delivery) {
				mu.Lock()
				order = append(order, name)
				mu.Unlock()
				next(ctx, d)
			}
		}
	}
	done := make(chan struct{})
	if err := f.bus.HandleSignals(bus.KindSignal, func(_ context.Context, d *Delivery) { close(done) }, mark("outer"), mark("inner")); err != nil {
		t.Fatal(err)
	}
	if err := f.client.PublishMsg(binaryMsg(t, "jido.signal.ping", nil)); err != nil {
		t.Fatal(err)
	}
	<-done
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(order, ",") != "outer,inner" {
		t.Fatalf("middleware ran as %v", order)
	}
}

// TestRejectsBadInput sends each kind of bad input the issue names, as a
// call, and checks the error reply, the dead letter on jido.dlq.<reason>
// (with the original subject, headers and bytes) and that the bus goes on
// serving.
func TestRejectsBadInput(t *testing.T) {
	f := newFixture(t, Options{Limits: bus.Limits{MaxDataBytes: 64}})
	delivered := make(chan *Delivery, 16)
	for _, kind := range []string{bus.KindAgent, bus.KindSignal} {
		if err := f.bus.HandleSignals(kind, func(_ context.Context, d *Delivery) {
			delivered <- d
			d.Respond(nil)
		}); err != nil {
			t.Fatal(err)
		}
	}
	header := func(kv ...string) nats.Header {
		h := nats.Header{}
		for i := 0; i < len(kv); i += 2 {
			h.Set(kv[i], kv[i+1])
		}
		return h
	}
	cases := []struct {
		name   string
		msg    *nats.Msg
		reason string
	}{
		{"missing ce-id", &nats.Msg{Subject: "jido.agent.c1.inc", Header: header("ce-specversion", "1.0", "ce-source", "s", "ce-type", "inc")}, bus.ReasonMissingAttribute},
		{"missing ce-source", &nats.Msg{Subject: "jido.agent.c1.inc", Header: header("ce-specversion", "1.0", "ce-id", "1", "ce-type", "inc")}, bus.ReasonMissingAttribute},
		{"missing ce-specversion", &nats.Msg{Subject: "jido.agent.c1.inc", Header: header("ce-id", "1", "ce-source", "s")}, bus.ReasonMissingAttribute},
		{"unknown specversion", &nats.Msg{Subject: "jido.agent.c1.inc", Header: header("ce-specversion", "9.9", "ce-id", "1", "ce-source", "s")}, bus.ReasonInvalidSpecVersion},
		{"ce-type disagrees with subject", &nats.Msg{Subject: "jido.agent.c1.inc", Header: header("ce-specversion", "1.0", "ce-id", "1", "ce-source", "s", "ce-type", "dec")}, bus.ReasonTypeMismatch},
		{"invalid type grammar", &nats.Msg{Subject: "jido.signal.a.b", Header: header("ce-specversion", "1.0", "ce-id", "1", "ce-source", "s", "ce-type", "a..b")}, bus.ReasonInvalidType},
		{"malformed structured JSON", &nats.Msg{Subject: "jido.signal.a", Header: header("content-type", "application/cloudevents+json"), Data: []byte(`{"specversion":"1.0",`)}, bus.ReasonMalformed},
		{"data over the limit", &nats.Msg{Subject: "jido.agent.c1.inc", Data: []byte(strings.Repeat("x", 65))}, bus.ReasonTooLarge},
		{"invalid agent id", &nats.Msg{Subject: "jido.agent._c1.inc", Data: []byte(`{}`)}, bus.ReasonInvalidAgentID},
		{"no type in subject", &nats.Msg{Subject: "jido.agent.c1", Data: []byte(`{}`)}, bus.ReasonInvalidSubject},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			reply, err := f.client.RequestMsg(c.msg, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			var st bus.ReplyStatus
			if err := json.Unmarshal(reply.Data, &st); err != nil {
				t.Fatalf("reply %s: %v", reply.Data, err)
			}
			if st.OK || st.Error == nil || st.Error.Type != c.reason || st.Error.Message == "" || strings.Contains(st.Error.Message, c.reason+":") {
				t.Fatalf("reply = %s, want a %s error with a plain message", reply.Data, c.reason)
			}
			dl := f.nextDeadLetter(t)
			if dl.Subject != "jido.dlq."+c.reason {
				t.Fatalf("dead letter on %s, want jido.dlq.%s", dl.Subject, c.reason)
			}
			if dl.Header.Get(HeaderDLQSubject) != c.msg.Subject || dl.Header.Get(HeaderDLQReason) != c.reason || dl.Header.Get(HeaderDLQError) == "" {
				t.Fatalf("dead letter headers = %v", dl.Header)
			}
			if string(dl.Data) != string(c.msg.Data) {
				t.Fatalf("dead letter body %q, want the original %q", dl.Data, c.msg.Data)
			}
			for k, v := range c.msg.Header {
				if dl.Header.Get(k) != v[0] {
					t.Fatalf("dead letter lost header %s", k)
				}
			}
		})
	}
	// The bus still serves.
	if _, err := f.client.RequestMsg(binaryMsg(t, "jido.signal.ok", nil), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	filed := f.awaitFiled(t, len(cases))
	if len(filed) != len(cases) {
		t.Fatalf("OnDeadLetter saw %d dead letters, want %d", len(filed), len(cases))
	}
	s := filed[0].Signal(bus.Limits{})
	if err := bus.ValidateSignal(&s, bus.Limits{}); err != nil || s.Type() != DeadLetterType {
		t.Fatalf("dead letter as a signal: %v, %v", s, err)
	}
}

func TestHandlerReject(t *testing.T) {
	f := newFixture(t, Options{})
	if err := f.bus.HandleSignals(bus.KindAgent, func(_ context.Context, d *Delivery) {
		d.Reject(bus.Errorf(bus.ReasonNotFound, "no agent %q", d.Address.AgentID))
		d.Respond(nil) // ignored: a delivery is answered once
	}); err != nil {
		t.Fatal(err)
	}
	reply, err := f.client.RequestMsg(binaryMsg(t, "jido.agent.nosuch.inc", nil), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"ok":false,"error":{"type":"not_found","message":"no agent \"nosuch\""}}`; string(reply.Data) != want {
		t.Fatalf("reply = %s, want %s", reply.Data, want)
	}
	if dl := f.nextDeadLetter(t); dl.Subject != "jido.dlq.not_found" {
		t.Fatalf("dead letter on %s", dl.Subject)
	}
}

func TestCastRejectionHasNoReply(t *testing.T) {
	f := newFixture(t, Options{})
	if err := f.bus.HandleSignals(bus.KindAgent, func(context.Context, *Delivery) {}); err != nil {
		t.Fatal(err)
	}
	if err := f.client.Publish("jido.agent.c1.x", nil); err != nil { // a plain cast: accepted
		t.Fatal(err)
	}
	if err := f.client.PublishMsg(&nats.Msg{Subject: "jido.agent.-bad.x"}); err != nil {
		t.Fatal(err)
	}
	if dl := f.nextDeadLetter(t); dl.Subject != "jido.dlq.invalid_agent_id" {
		t.Fatalf("dead letter on %s", dl.Subject)
	}
	if st := f.bus.Stats(); st.Received != 1 || st.Rejected != 1 || st.DeadLetters != 1 {
		t.Fatalf("stats = %+v", st)
	}
}

func TestHandleAPI(t *testing.T) {
	f := newFixture(t, Options{})
	type req struct {
		ID string `json:"id"`
	}
	if err := f.bus.HandleAPI("jido.api.agent.state", func(_ context.Context, body []byte) (any, error) {
		var r req
		if err := DecodeRequest(body, &r); err != nil {
			return nil, err
		}
		if r.ID != "c1" {
			return nil, bus.Errorf(bus.ReasonNotFound, "no agent %q", r.ID)
		}
		return map[string]int{"count": 3}, nil
	}); err != nil {
		t.Fatal(err)
	}
	ask := func(body string) string {
		t.Helper()
		m, err := f.client.Request("jido.api.agent.state", []byte(body), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		return string(m.Data)
	}
	if got := ask(`{"id":"c1"}`); got != `{"ok":true,"count":3}` {
		t.Fatalf("ok reply = %s", got)
	}
	if got := ask(`{"id":"zz"}`); got != `{"ok":false,"error":{"type":"not_found","message":"no agent \"zz\""}}` {
		t.Fatalf("not found reply = %s", got)
	}
	if got := ask(`{"id":`); !strings.Contains(got, `"invalid_request"`) {
		t.Fatalf("bad JSON reply = %s", got)
	}
	if dl := f.nextDeadLetter(t); dl.Subject != "jido.dlq.invalid_request" {
		t.Fatalf("dead letter on %s", dl.Subject)
	}
	if got := ask(`{"id":"c1","extra":1}`); !strings.Contains(got, `unknown field`) {
		t.Fatalf("unknown field reply = %s", got)
	}
	select {
	case dl := <-f.dlq:
		if dl.Subject != "jido.dlq.invalid_request" {
			t.Fatalf("dead letter on %s", dl.Subject)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no dead letter for an unknown field")
	}
	if st := f.bus.Stats(); st.APIRequests != 4 {
		t.Fatalf("stats = %+v", st)
	}
}

func TestShutdownStopsDelivery(t *testing.T) {
	f := newFixture(t, Options{})
	if err := f.bus.HandleSignals(bus.KindSignal, func(_ context.Context, d *Delivery) { d.Respond(nil) }); err != nil {
		t.Fatal(err)
	}
	if err := f.bus.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := f.client.Request("jido.signal.x", nil, 200*time.Millisecond); err == nil {
		t.Fatal("a closed bus answered")
	}
	if err := f.bus.HandleSignals(bus.KindSignal, func(context.Context, *Delivery) {}); err == nil {
		t.Fatal("HandleSignals on a closed bus succeeded")
	}
}

// TestShutdownWaitsForHandlers: Shutdown returns only after a handler that was
// already running has finished (unsubscribing alone does not wait), and a
// signal that reaches the bus once it has closed is refused as
// unavailable, answered and dead-lettered, not dropped.
func TestShutdownWaitsForHandlers(t *testing.T) {
	f := newFixture(t, Options{})
	running, release := make(chan struct{}), make(chan struct{})
	var finished bool
	if err := f.bus.HandleSignals(bus.KindAgent, func(_ context.Context, d *Delivery) {
		if d.Signal.Type() == "hold" {
			close(running)
			<-release
			finished = true
		}
		d.Respond(nil)
	}); err != nil {
		t.Fatal(err)
	}
	if err := f.client.PublishMsg(binaryMsg(t, "jido.agent.a1.hold", nil)); err != nil {
		t.Fatal(err)
	}
	<-running
	closed := make(chan error, 1)
	go func() { closed <- f.bus.Shutdown(context.Background()) }()
	// Shutdown gets as far as it can while the handler runs: it waits
	// for it, or it has returned.
	testkit.Eventually(t, "Shutdown waiting for the handler, or returned", func() bool {
		return len(closed) == 1 || testkit.BlockedIn("bus/natsbus.(*Bus).Shutdown")
	})
	if len(closed) == 1 {
		t.Fatalf("Shutdown returned (%v) while a handler was running", <-closed)
	}
	close(release)
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	if !finished {
		t.Fatal("Shutdown returned before the handler finished")
	}
	if err := f.bus.enter(); bus.ErrorType(err) != bus.ReasonUnavailable {
		t.Fatalf("enter after Shutdown: %v", err)
	}
}

// TestShutdownHandlesWhatWasSent: the messages NATS sent the bus before
// it shut down — waiting in the client's buffer behind a busy handler — are
// handled, not dropped and not refused: Shutdown drains.
func TestShutdownHandlesWhatWasSent(t *testing.T) {
	f := newFixture(t, Options{})
	running, release := make(chan struct{}), make(chan struct{})
	var handled atomic.Int64
	if err := f.bus.HandleSignals(bus.KindAgent, func(_ context.Context, d *Delivery) {
		if d.Signal.Type() == "hold" {
			close(running)
			<-release
		}
		handled.Add(1)
	}); err != nil {
		t.Fatal(err)
	}
	if err := f.client.PublishMsg(binaryMsg(t, "jido.agent.a1.hold", nil)); err != nil {
		t.Fatal(err)
	}
	<-running
	const queued = 200
	for range queued {
		if err := f.client.PublishMsg(binaryMsg(t, "jido.agent.a1.work", nil)); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.client.Flush(); err != nil { // the server has sent them all on
		t.Fatal(err)
	}
	closed := make(chan error, 1)
	go func() { closed <- f.bus.Shutdown(context.Background()) }()
	close(release)
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	if got := handled.Load(); got != queued+1 {
		t.Fatalf("%d of %d signals handled; dead letters: %d", got, queued+1, f.bus.Stats().DeadLetters)
	}
}
