package runtime

import (
	"context"
	"errors"
	"testing"

	"github.com/jido-bus/jido-bus/internal/testkit"
)

// TestCallTimesOutAndTheSignalIsStillDecided: a call whose context ends
// before the decision is committed returns the context's error, saying
// the signal stays queued; it is then decided once, as the error says.
func TestCallTimesOutAndTheSignalIsStillDecided(t *testing.T) {
	h := newHarness(t)
	h.start("counter", "c1", Options{})
	g := h.gateAppends("c1")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := h.rt.Call(ctx, "c1", signal(t, "counter.increment", map[string]int{"by": 5}))
		done <- err
	}()
	testkit.Eventually(h.t, "the call's commit held at the gate", func() bool {
		return testkit.BlockedIn("agents/runtime.(*gatedStore).wait")
	})
	cancel() // the caller gives up, as a deadline would
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("call after its context ended: %v, want context.Canceled", err)
	}
	if info, _ := h.rt.State("c1"); info.Version != 0 {
		t.Fatalf("version %d before the commit went through, want 0", info.Version)
	}
	close(g.gate)
	testkit.Eventually(h.t, "the abandoned call's signal decided", func() bool { info, _ := h.rt.State("c1"); return info.Version == 1 })
	if got := h.state("c1")["count"]; got != 5.0 {
		t.Fatalf("count = %v, want 5: decided once", got)
	}
}
