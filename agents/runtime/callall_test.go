package runtime

import (
	"context"
	"reflect"
	"testing"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/internal/testkit"
)

// TestCallAllCommitsInOneAppend: signals handed over with CallAll are
// committed in one append — also when other signals queued before them
// fill most of a batch, which they then stretch rather than be split
// over two appends — and CallAll returns once all are committed.
func TestCallAllCommitsInOneAppend(t *testing.T) {
	h := newHarness(t)
	h.start("counter", "c1", Options{})
	g := h.gateAppends("c1")
	three := func() []bus.Signal {
		var sigs []bus.Signal
		for range 3 {
			sigs = append(sigs, signal(t, "counter.increment", map[string]int{"by": 1}))
		}
		return sigs
	}
	done := make(chan error, 1)
	go func() { done <- h.rt.CallAll(context.Background(), "c1", three()...) }()
	testkit.Eventually(t, "the three held at the gate", func() bool {
		return testkit.BlockedIn("agents/runtime.(*gatedStore).wait")
	})
	close(g.gate)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := g.appendSizes(); !reflect.DeepEqual(got, []int{6}) {
		t.Fatalf("appends carried %v events, want one of 6 (3 signals, 3 cmd records)", got)
	}

	// maxBatch-2 signals queue behind a commit; the three come after them.
	g = h.gateAppends("c1")
	var queued []bus.Signal
	for range maxBatch - 2 {
		queued = append(queued, signal(t, "counter.increment", map[string]int{"by": 1}))
	}
	s := h.queueBehindCommit("c1", signal(t, "counter.increment", map[string]int{"by": 1}), queued...)
	go func() { done <- h.rt.CallAll(context.Background(), "c1", three()...) }()
	testkit.Eventually(t, "the three queued", func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return len(s.inbox) == maxBatch+1
	})
	close(g.gate)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := g.appendSizes(); !reflect.DeepEqual(got, []int{2, 2 * (maxBatch + 1)}) {
		t.Fatalf("appends carried %v events, want 2, then %d: the queued ones and the three together", got, 2*(maxBatch+1))
	}
	if got := h.state("c1")["count"]; got != float64(3+1+maxBatch-2+3) {
		t.Fatalf("count = %v, want %d", got, 3+1+maxBatch-2+3)
	}
}
