package natsbus

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/bus"
)

// TestReplySubjectIsNoWayAroundPermissions: a reply subject is where the
// node publishes, with its own rights. A client that may not publish on
// <prefix>.emit.> (forged emits), <prefix>.dlq.> or the JetStream API
// could send a request or a call with its reply subject there and have
// the node publish for it. Such a request is refused as forbidden — not
// served, dead-lettered, answered nowhere — and nothing is published on
// the reply subject; inboxes and subjects outside the node's space are
// answered as always.
func TestReplySubjectIsNoWayAroundPermissions(t *testing.T) {
	var r refusals
	f := newFixture(t, Options{OnRefused: r.add})
	var served atomic.Int32
	if err := f.bus.HandleAPI("jido.api.agent.state", func(context.Context, []byte) (any, error) {
		served.Add(1)
		return map[string]int{"count": 1}, nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := f.bus.HandleSignals(bus.KindAgent, func(_ context.Context, d *Delivery) {
		served.Add(1)
		d.Respond(map[string]int{"count": 1})
	}); err != nil {
		t.Fatal(err)
	}
	reflected := make(chan *nats.Msg, 16)
	for _, s := range []string{"jido.emit.>", "jido.api.log.truncate", "$JS.API.>", "jido"} {
		sub, err := f.client.ChanSubscribe(s, reflected)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = sub.Unsubscribe() })
	}
	if err := f.client.Flush(); err != nil {
		t.Fatal(err)
	}
	bad := []string{"jido.emit.victim.payment.approved", "jido.api.log.truncate", "$JS.API.STREAM.CREATE.evil", "jido"}
	for _, to := range []string{"jido.api.agent.state", "jido.agent.a1.counter.increment"} {
		for _, reply := range bad {
			if err := f.client.PublishMsg(&nats.Msg{Subject: to, Reply: reply, Data: []byte(`{"id":"a1"}`)}); err != nil {
				t.Fatal(err)
			}
			dl := f.nextDeadLetter(t)
			if dl.Subject != "jido.dlq.forbidden" || dl.Header.Get(HeaderDLQSubject) != to || !strings.Contains(dl.Header.Get(HeaderDLQError), reply) {
				t.Fatalf("%s with reply %s: dead letter on %s (%s), want jido.dlq.forbidden naming the reply subject", to, reply, dl.Subject, dl.Header.Get(HeaderDLQError))
			}
		}
	}
	// Inboxes, the roles' own and any outside the node's space, are
	// answered. Their answers come after anything the node published for
	// the requests above (one connection publishes in order).
	for _, reply := range []string{"_INBOX_app.x1", "myapp.replies.1"} {
		sub, err := f.client.SubscribeSync(reply)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.client.PublishMsg(&nats.Msg{Subject: "jido.api.agent.state", Reply: reply, Data: []byte(`{}`)}); err != nil {
			t.Fatal(err)
		}
		if m, err := sub.NextMsg(5 * time.Second); err != nil || !strings.Contains(string(m.Data), `"ok":true`) {
			t.Fatalf("request with reply %s: %v %v", reply, m, err)
		}
		_ = sub.Unsubscribe()
	}
	select {
	case m := <-reflected:
		t.Fatalf("the node published on %s for a refused request: %s", m.Subject, m.Data)
	default:
	}
	if got := served.Load(); got != 2 {
		t.Fatalf("handlers ran %d times, want 2 (the requests with an inbox only)", got)
	}
	if got := r.snapshot(); got[bus.ReasonForbidden] != 2*len(bad) {
		t.Fatalf("OnRefused told %v, want forbidden %d times", got, 2*len(bad))
	}
}
