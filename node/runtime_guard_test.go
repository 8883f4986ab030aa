package node

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/agents/runtime"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/eventlog"
)

// TestRuntimeSignalTypesFromOutsideAreForbidden: the jido.* signal types
// are the runtime's own (its records and the lifecycle signals it
// delivers). Sent from outside they were committed to the agent's stream
// like any signal: a forged jido.agent.stopped made the agent fail at
// the next start ("stops the incarnation the index lists as running"), a
// forged jido.agent.instruction.result ran any action of the agent with
// the sender's params, bypassing its routes, and jido.agent.child.exit or
// jido.cron_tick made an agent believe a child exited or a timer fired.
// Each is refused forbidden — on the agent's subject, through the agent
// API's call and cast, and as a broadcast — before the commit: the
// stream is untouched, each is a dead letter, and the agent comes back
// running after a restart.
func TestRuntimeSignalTypesFromOutsideAreForbidden(t *testing.T) {
	dir := t.TempDir()
	n := startNode(t, dir)
	ctx := context.Background()
	if _, err := n.Runtime().Start(ctx, runtime.StartRequest{Type: "counter", ID: "c1"}); err != nil {
		t.Fatal(err)
	}
	nc, err := nats.Connect(n.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	ask := func(subject, body string) string {
		t.Helper()
		m, err := nc.Request(subject, []byte(body), 5*time.Second)
		if err != nil {
			t.Fatalf("%s: %v", subject, err)
		}
		return string(m.Data)
	}
	forged := []string{
		runtime.TypeStopped, runtime.TypeStarted, runtime.TypeCmd, runtime.TypeEffects,
		runtime.TypeRegistered, runtime.TypeChildExit, runtime.TypeChildStarted, runtime.TypeOrphaned,
		runtime.TypeError, runtime.TypeCronTick, runtime.TypeInstructionResult, "jido.deadletter",
	}
	want := 0
	for _, typ := range forged {
		data := `{"result_action":"increment","result":{"by":100}}`
		for _, c := range []struct{ subject, body string }{
			{"jido.agent.c1." + typ, data},
			{"jido.api.agent.call", `{"id":"c1","type":"` + typ + `","data":` + data + `}`},
			{"jido.api.agent.cast", `{"id":"c1","type":"` + typ + `","data":` + data + `}`},
			{"jido.signal." + typ, data},
		} {
			got := ask(c.subject, c.body)
			want++
			if !strings.Contains(got, `"type":"forbidden"`) || !strings.Contains(got, typ) {
				t.Fatalf("%s %s: %s; want forbidden naming the type", c.subject, c.body, got)
			}
		}
	}
	st, err := n.Runtime().State("c1")
	if err != nil {
		t.Fatal(err)
	}
	if st.Version != 0 {
		t.Fatalf("c1 at version %d after only refused signals; want 0", st.Version)
	}
	var dead int
	for e, err := range n.Log().ReadStream(DeadLetterStream, eventlog.ReadOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		var d struct {
			Reason string `json:"reason"`
		}
		if json.Unmarshal(e.Event.Data(), &d) == nil && d.Reason == bus.ReasonForbidden {
			dead++
		}
	}
	if dead != want {
		t.Fatalf("%d forbidden dead letters, want %d", dead, want)
	}
	// What a client may send still works, and the agent survives a restart.
	if got := ask("jido.agent.c1.counter.increment", `{"by":2}`); !strings.Contains(got, `"count":2`) {
		t.Fatalf("increment: %s", got)
	}
	nc.Close()
	if err := n.Close(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	n = startNode(t, dir)
	defer n.Close(5 * time.Second)
	st, err = n.Runtime().State("c1")
	if err != nil || st.Status != "running" {
		t.Fatalf("c1 after a restart: %+v, %v", st, err)
	}
}
