package node

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/projects/assistant"
)

// TestHookAnsweringIsAnOperators: a hook decides which tool calls run
// and with which arguments, so only an operator (or an admin) may answer
// one: a client's subscription to the hook subjects is refused by the
// server, and the node hears no responder; an operator's answer is the
// reply.
func TestHookAnsweringIsAnOperators(t *testing.T) {
	n := startWithUsers(t, "acme")
	const subject = "acme.hook.p1.tool.before"
	ask := func() ([]byte, string, error) {
		return assistant.NATSHooks(n.Conn(), n.subjects)(context.Background(), "p1", "tool.before", []byte(`{"tool":"write_file"}`), 5*time.Second)
	}
	client := connectAs(t, n, RoleClient)
	if _, err := client.Subscribe(subject, func(m *nats.Msg) { _ = m.Respond([]byte(`{"decision":"allow"}`)) }); err != nil {
		t.Fatal(err)
	}
	if err := client.Flush(); err != nil {
		t.Fatal(err)
	}
	if reply, _, err := ask(); !errors.Is(err, assistant.ErrNoHook) {
		t.Fatalf("a client answered a hook: %s %v", reply, err)
	}
	op := connectAs(t, n, RoleOperator)
	if _, err := op.QueueSubscribe(subject, "rules", func(m *nats.Msg) { _ = m.Respond([]byte(`{"decision":"deny","reason":"ops"}`)) }); err != nil {
		t.Fatal(err)
	}
	if err := op.Flush(); err != nil {
		t.Fatal(err)
	}
	reply, asked, err := ask()
	if err != nil || string(reply) != `{"decision":"deny","reason":"ops"}` || asked != subject {
		t.Fatalf("the operator's answer: %s on %s, %v", reply, asked, err)
	}
}
