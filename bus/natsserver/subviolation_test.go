package natsserver_test

import (
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/bus/natsserver"
	"github.com/jido-bus/jido-bus/bus/natsserver/natstest"
)

// TestSubscriptionViolationsAreReported: a subscription the server
// refuses by permission (a client reading ">", the dead letters, another
// user's inbox) was only in the server's log; OnViolation hears of it
// too, with the subject, the user and Subscribe set, queue group or not.
func TestSubscriptionViolationsAreReported(t *testing.T) {
	v := newViolations()
	srv := natstest.RunServer(t, func(o *natsserver.Options) {
		o.Users = []natsserver.User{{Name: "bob", Password: hash(t, "bobpw"), Permissions: &natsserver.Permissions{
			PublishAllow: []string{"ok.>"}, SubscribeAllow: []string{"_INBOX_bob.>"},
		}}}
		o.OnViolation = v.add
	})
	errOpt, _ := asyncErrs()
	bob := natstest.Connect(t, srv, nats.UserInfo("bob", "bobpw"), errOpt, nats.CustomInboxPrefix("_INBOX_bob"))
	if _, err := bob.SubscribeSync("jido.dlq.>"); err != nil {
		t.Fatal(err)
	}
	if got := v.next(t); got.Subject != "jido.dlq.>" || got.User != "bob" || !got.Subscribe || got.Reply {
		t.Fatalf("violation = %+v, want a subscription to jido.dlq.> by bob", got)
	}
	if _, err := bob.QueueSubscribeSync("_INBOX_alice.>", "q"); err != nil {
		t.Fatal(err)
	}
	if got := v.next(t); got.Subject != "_INBOX_alice.>" || got.User != "bob" || !got.Subscribe {
		t.Fatalf("violation = %+v, want a queue subscription to _INBOX_alice.> by bob", got)
	}
}
