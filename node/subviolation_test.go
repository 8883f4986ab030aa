package node

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/jido-bus/jido-bus/internal/testkit"
)

// TestRefusedSubscriptionIsADeadLetter: a client trying to read the dead
// letters, everything (">") or another user's inbox was refused by the
// server and seen nowhere the operator looks. Each refused subscription
// is now a dead letter of reason forbidden naming the user and the
// subject, and counted.
func TestRefusedSubscriptionIsADeadLetter(t *testing.T) {
	n := startWithUsers(t, "")
	nc, err := nats.Connect(n.URL(), nats.UserInfo(RoleClient, RoleClient+"pw"), nats.CustomInboxPrefix(InboxPrefix(RoleClient)),
		nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) {}))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	subjects := []string{"jido.dlq.>", ">", InboxPrefix(RoleOperator) + ".>"}
	for _, s := range subjects {
		if _, err := nc.SubscribeSync(s); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]bool{}
	for _, s := range subjects {
		want["user client may not subscribe to "+s] = true
	}
	testkit.EventuallyNil(t, "a dead letter for each refused subscription", func() error {
		for e, err := range n.Log().ReadStream(DeadLetterStream, eventlog.ReadOptions{}) {
			if err != nil {
				break // no dead letter yet: the stream does not exist
			}
			var d struct{ Reason, Error string }
			if json.Unmarshal(e.Event.Data(), &d) != nil || d.Reason != bus.ReasonForbidden {
				continue
			}
			for w := range want {
				if strings.Contains(d.Error, w+" ") {
					delete(want, w)
				}
			}
		}
		if len(want) > 0 {
			return fmt.Errorf("no dead letter for %v", want)
		}
		return nil
	})
	if body := metricsBody(t, n); !strings.Contains(body, `jido_signals_refused_total{reason="forbidden"} 3`) {
		t.Fatalf("metrics do not count 3 forbidden:\n%s", body)
	}
}
