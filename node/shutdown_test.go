package node

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/agents/runtime"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/codec"
	"github.com/jido-bus/jido-bus/bus/natsbus"
	"github.com/jido-bus/jido-bus/eventlog"
)

// TestCloseAccountsForEveryCast: casts the node has received when it is
// closed — waiting in its subscription, in agents' inboxes — are each
// committed or dead-lettered, none dropped: after the close the log holds
// every one of them, in an agent's stream or in the stream dlq.
func TestCloseAccountsForEveryCast(t *testing.T) {
	dir := t.TempDir()
	n := startNode(t, dir)
	ctx := context.Background()
	const agentsN, casts = 4, 20_000
	for i := range agentsN {
		// A small queue, so that some casts are refused (queue_overflow)
		// while others wait.
		opts := runtime.Options{MaxQueueSize: 2_000}
		if _, err := n.Runtime().Start(ctx, runtime.StartRequest{Type: "counter", ID: fmt.Sprintf("c%d", i), Options: opts}); err != nil {
			t.Fatal(err)
		}
	}
	nc, err := nats.Connect(n.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	sent := make(map[string]bool, casts)
	for i := range casts {
		sig, err := bus.NewSignal("counter.increment", "test", map[string]int{"by": 1})
		if err != nil {
			t.Fatal(err)
		}
		msg, err := codec.Encode(fmt.Sprintf("jido.agent.c%d.counter.increment", i%agentsN), &sig, codec.Binary)
		if err != nil {
			t.Fatal(err)
		}
		if err := nc.PublishMsg(msg); err != nil {
			t.Fatal(err)
		}
		sent[sig.ID()] = true
	}
	// Once flushed, the server has passed every cast on to the node.
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := n.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}

	l, err := eventlog.Open(LogDir(dir), eventlog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	seen := map[string]string{}
	note := func(id, where string) {
		if !sent[id] {
			return
		}
		if seen[id] != "" {
			t.Errorf("cast %s is in %s and in %s", id, seen[id], where)
		}
		seen[id] = where
	}
	committed, dead := 0, 0
	for i := range agentsN {
		for e, err := range l.ReadStream(fmt.Sprintf("agent/c%d", i), eventlog.ReadOptions{Types: "counter.increment"}) {
			if err != nil {
				t.Fatal(err)
			}
			note(e.Event.ID(), e.Stream)
			committed++
		}
	}
	for e, err := range l.ReadStream(DeadLetterStream, eventlog.ReadOptions{}) {
		if errors.Is(err, eventlog.ErrNotFound) {
			break // nothing was refused
		}
		if err != nil {
			t.Fatal(err)
		}
		var d natsbus.DeadLetter
		if err := json.Unmarshal(e.Event.Data(), &d); err != nil {
			t.Fatal(err)
		}
		note(d.Header.Get("ce-id"), "dlq ("+d.Reason+")")
		dead++
	}
	t.Logf("%d casts: %d committed, %d dead-lettered", casts, committed, dead)
	if len(seen) != casts {
		t.Fatalf("%d of %d casts accounted for (%d committed, %d dead-lettered); the rest were dropped", len(seen), casts, committed, dead)
	}
}
