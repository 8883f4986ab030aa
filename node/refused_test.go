package node

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jido-bus/jido-bus/agents/runtime"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/jido-bus/jido-bus/internal/testkit"
)

// TestRefusedCastIsADeadLetter: a cast the agent accepted and the log
// then refused (an attribute past the log's limit, as only the Go API can
// send) is a dead letter under the log's reason, and the casts beside it
// commit.
func TestRefusedCastIsADeadLetter(t *testing.T) {
	n := startNode(t, t.TempDir())
	defer n.Shutdown(context.Background())
	ctx := context.Background()
	if _, err := n.Runtime().Start(ctx, runtime.StartRequest{Type: "counter", ID: "c1"}); err != nil {
		t.Fatal(err)
	}
	bad, err := bus.NewSignal("counter.increment", "test", map[string]int{"by": 100})
	if err != nil {
		t.Fatal(err)
	}
	bad.SetExtension("padding", strings.Repeat("x", 128<<10))
	for i := range 20 {
		sig, err := bus.NewSignal("counter.increment", "test", map[string]int{"by": 1})
		if err != nil {
			t.Fatal(err)
		}
		if i == 10 {
			if err := n.Runtime().Cast("c1", bad); err != nil {
				t.Fatal(err)
			}
		}
		if err := n.Runtime().Cast("c1", sig); err != nil {
			t.Fatal(err)
		}
	}
	testkit.EventuallyNil(t, "one dead letter and count 20", func() error {
		info, err := n.Log().Stream(DeadLetterStream)
		st, _ := n.Runtime().State("c1")
		if err == nil && info.Count == 1 && strings.Contains(string(st.State), `"count":20`) {
			return nil
		}
		return fmt.Errorf("dlq %+v (%v), agent %s", info, err, st.State)
	})
	for e, err := range n.Log().ReadStream(DeadLetterStream, eventlog.ReadOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(e.Event.Data()), `"reason":"too_large"`) || !strings.Contains(string(e.Event.Data()), bad.ID()) {
			t.Fatalf("dead letter %s, want the oversized cast as too_large", e.Event.Data())
		}
	}
}

// TestInvalidConversationEventIsRefused: a conversation event that fails
// its schema (a tool result without causationid) is answered
// invalid_event, is not a conversation entry, is a dead letter, and its
// id stays free: the corrected event with the same id is accepted.
func TestInvalidConversationEventIsRefused(t *testing.T) {
	n := startNode(t, t.TempDir())
	defer n.Shutdown(context.Background())
	ctx := context.Background()
	startOutsideDriven(t, n, "p1/c1")
	if _, err := n.convSend(ctx, []byte(`{"conv":"p1/c1","text":"run the tests"}`)); err != nil {
		t.Fatal(err)
	}
	before, err := n.Log().Stream("conversation/p1/c1")
	if err != nil {
		t.Fatal(err)
	}
	bad, err := bus.NewSignal("conversation.tool.completed", "assistant", map[string]any{"call_id": "k1", "output": "ok"})
	if err != nil {
		t.Fatal(err)
	}
	r, err := n.Runtime().Call(ctx, "p1/c1", bad)
	if bus.ErrorType(err) != "invalid_event" || r.Committed {
		t.Fatalf("the event without causationid: %+v %v, want invalid_event, not committed", r, err)
	}
	if after, err := n.Log().Stream("conversation/p1/c1"); err != nil || after.Head != before.Head {
		t.Fatalf("conversation stream %+v (%v), want it as before (head %d)", after, err, before.Head)
	}
	testkit.EventuallyNil(t, "one dead letter", func() error {
		info, err := n.Log().Stream(DeadLetterStream)
		if err == nil && info.Count != 1 {
			err = fmt.Errorf("dlq %+v", info)
		}
		return err
	})
	fixed := bad.Clone()
	fixed.SetExtension(bus.ExtCausationID, "k1")
	if r, err := n.Runtime().Call(ctx, "p1/c1", fixed); err != nil || r.Duplicate {
		t.Fatalf("the corrected event with the same id: %+v %v, want accepted", r, err)
	}
}
