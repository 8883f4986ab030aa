package natsbus

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/bus"
)

// TestReplySubjectsTheNodeMustNotPublishOnAreRefused: the bus answers
// with its own rights, so a requester that names as its reply subject
// something it may not publish on itself — an agent's emit subject, a
// dead-letter subject, the control plane, JetStream's API ($JS.API.STREAM.PURGE.X)
// — would make the node publish there for it (a confused deputy: a client
// forging what agents emit, or purging a stream). Such a request is
// refused forbidden, never handled, never answered there, and filed as a
// dead letter that names the reply subject; with InboxReplies only an
// inbox (_INBOX…) is a reply subject at all. A request answered on an
// inbox still works.
func TestReplySubjectsTheNodeMustNotPublishOnAreRefused(t *testing.T) {
	var r refusals
	f := newFixture(t, Options{OnRefused: r.add, InboxReplies: true})
	handled := make(chan string, 16)
	if err := f.bus.HandleSignals(bus.KindAgent, func(_ context.Context, d *Delivery) {
		handled <- d.Msg.Subject
		d.Respond(map[string]int{"count": 1})
	}); err != nil {
		t.Fatal(err)
	}
	if err := f.bus.HandleAPI("jido.api.x.get", func(context.Context, []byte) (any, error) {
		handled <- "jido.api.x.get"
		return map[string]bool{"done": true}, nil
	}); err != nil {
		t.Fatal(err)
	}
	// Whatever the bus publishes outside the dead letters and the inboxes.
	watch, err := f.client.SubscribeSync(">")
	if err != nil {
		t.Fatal(err)
	}
	if err := f.client.Flush(); err != nil {
		t.Fatal(err)
	}
	forged := []struct{ subject, reply string }{
		{"jido.agent.a1.counter.increment", "jido.emit.a1.counter.changed"},
		{"jido.api.x.get", "jido.emit.a1.forged"},
		{"jido.api.x.get", "jido.dlq.forged"},
		{"jido.api.x.get", "jido.api.log.truncate"},
		{"jido.agent.a1.counter.increment", "jido.agent.a2.counter.increment"},
		{"jido.api.x.get", "$JS.API.STREAM.PURGE.MINE"},
		{"jido.agent.a1.counter.increment", "$SYS.REQ.SERVER.PING"},
		{"jido.api.x.get", "orders.created"}, // not an inbox
	}
	for _, c := range forged {
		body := ""
		if strings.HasPrefix(c.subject, "jido.agent.") {
			body = `{"by":1}`
		}
		if err := f.client.PublishMsg(&nats.Msg{Subject: c.subject, Reply: c.reply, Data: []byte(body)}); err != nil {
			t.Fatal(err)
		}
		dl := f.nextDeadLetter(t)
		if got := dl.Header.Get(HeaderDLQReason); got != bus.ReasonForbidden {
			t.Fatalf("%s reply %s: dead letter reason %q, want forbidden", c.subject, c.reply, got)
		}
		if msg := dl.Header.Get(HeaderDLQError); !strings.Contains(msg, c.reply) || !strings.Contains(msg, "inbox") {
			t.Fatalf("%s reply %s: dead letter says %q; want it to name the reply subject and say to use an inbox", c.subject, c.reply, msg)
		}
	}
	// Inboxes are answered: the default and a per-user prefix.
	for _, inbox := range []string{"_INBOX", "_INBOX_app"} {
		c, err := nats.Connect(f.client.ConnectedUrl(), nats.CustomInboxPrefix(inbox))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Request("jido.api.x.get", nil, 5*time.Second); err != nil {
			t.Fatalf("request with inbox %s: %v", inbox, err)
		}
		c.Close()
	}
	if err := f.client.Flush(); err != nil {
		t.Fatal(err)
	}
	for {
		m, err := watch.NextMsg(0)
		if err != nil {
			break
		}
		for _, c := range forged {
			if m.Subject == c.reply {
				t.Fatalf("the bus published on the forged reply subject %s: %s", m.Subject, m.Data)
			}
		}
	}
	if got := len(handled); got != 2 {
		t.Fatalf("handled %d requests, want only the 2 with an inbox", got)
	}
	if got := r.snapshot()[bus.ReasonForbidden]; got != len(forged) {
		t.Fatalf("OnRefused told of %d forbidden, want %d", got, len(forged))
	}
}

// TestReplyOutsideThePrefixIsAnsweredWithoutInboxReplies: without
// InboxReplies (no roles: everyone may publish anywhere anyway) a custom
// inbox prefix still works; only the prefix and $-subjects are refused.
func TestReplyOutsideThePrefixIsAnsweredWithoutInboxReplies(t *testing.T) {
	f := newFixture(t, Options{})
	if err := f.bus.HandleAPI("jido.api.x.get", func(context.Context, []byte) (any, error) { return nil, nil }); err != nil {
		t.Fatal(err)
	}
	c, err := nats.Connect(f.client.ConnectedUrl(), nats.CustomInboxPrefix("myapp.replies"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Request("jido.api.x.get", nil, 5*time.Second); err != nil {
		t.Fatalf("request with a custom inbox: %v", err)
	}
	c2, err := nats.Connect(f.client.ConnectedUrl(), nats.CustomInboxPrefix("jido.emit.a1"))
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if _, err := c2.Request("jido.api.x.get", nil, 300*time.Millisecond); err == nil {
		t.Fatal("a reply under the prefix was answered")
	}
	if got := f.nextDeadLetter(t).Header.Get(HeaderDLQReason); got != bus.ReasonForbidden {
		t.Fatalf("dead letter reason %q", got)
	}
}
