package runtime

import (
	"context"
	"strings"
	"testing"

	"github.com/jido-bus/jido-bus/bus"
)

// TestTruncateGuardReadsThePartitionIndex: in a cluster the agents are
// listed in their partition's index stream, not IndexStream; a node that
// does not run the agent (it cannot snapshot it) must still find it there
// and refuse a cut its snapshot does not cover, where reading IndexStream
// would find no agent and let the cut through.
func TestTruncateGuardReadsThePartitionIndex(t *testing.T) {
	h := newHarness(t, clustered)
	acquire(t, h.rt, 0)
	h.start("counter", "a1", Options{})
	for range 3 {
		h.mustCall("a1", "counter.increment", map[string]int{"by": 1})
	}
	s, err := h.rt.lookup("a1")
	if err != nil {
		t.Fatal(err)
	}
	other := h.secondNode() // owns nothing: a1 does not run there
	err = other.PrepareTruncate(context.Background(), s.stream, 3, false)
	if bus.ErrorType(err) != ReasonTruncateRefused || !strings.Contains(err.Error(), "agent a1") {
		t.Fatalf("a cut past a1's snapshot through a node not running it: %v, want %s naming the agent", err, ReasonTruncateRefused)
	}
	// Through the node that runs it, the agent is snapshotted first and
	// the cut goes ahead.
	if err := h.rt.PrepareTruncate(context.Background(), s.stream, 3, false); err != nil {
		t.Fatalf("the same cut through the owner: %v", err)
	}
}
