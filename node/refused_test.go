package node

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jido-bus/jido-bus/agents/runtime"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/eventlog"
)

// TestRefusedCastIsADeadLetter: a cast the agent accepted and the log
// then refused (an attribute past the log's limit, as only the Go API can
// send) is a dead letter under the log's reason, and the casts beside it
// commit.
func TestRefusedCastIsADeadLetter(t *testing.T) {
	n := startNode(t, t.TempDir())
	defer n.Close(5 * time.Second)
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
	deadline := time.Now().Add(10 * time.Second)
	for {
		info, err := n.Log().Stream(DeadLetterStream)
		st, _ := n.Runtime().State("c1")
		if err == nil && info.Count == 1 && strings.Contains(string(st.State), `"count":20`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("dlq %+v (%v), agent %s: want one dead letter and count 20", info, err, st.State)
		}
		time.Sleep(10 * time.Millisecond)
	}
	for e, err := range n.Log().ReadStream(DeadLetterStream, eventlog.ReadOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(e.Event.Data()), `"reason":"too_large"`) || !strings.Contains(string(e.Event.Data()), bad.ID()) {
			t.Fatalf("dead letter %s, want the oversized cast as too_large", e.Event.Data())
		}
	}
}
