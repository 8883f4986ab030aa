package runtime

import (
	"context"
	"testing"
	"time"

	"github.com/jido-bus/jido-bus/internal/testkit"
)

// TestPendingTimerFiresAfterFailover: an agent's Schedule still pending
// when its partition moves to another node without a release (the owner
// died) fires on the new owner: Acquire brings the agent back with the
// single-node recovery path, which rebuilds what is awaited from the log
// and arms it. The new node's clock is two hours on, past the schedule's
// hour, so the timer is due the moment it is armed; the old owner's clock
// never reaches it.
func TestPendingTimerFiresAfterFailover(t *testing.T) {
	h := newHarness(t, clustered)
	acquire(t, h.rt, 0)
	h.start("probe", "a1", Options{})
	h.mustCall("a1", "probe.schedule", map[string]any{"ms": 3_600_000})
	s, err := h.rt.lookup("a1")
	if err != nil {
		t.Fatal(err)
	}
	if st := s.timers.snapshot(); len(st.Awaiting) != 1 {
		t.Fatalf("a1 awaits %v on its first owner, want the schedule", st.Awaiting)
	}

	// The partition moves without a release: the first owner is gone
	// as far as the cluster knows, and the second takes it over.
	cfg := h.cfg
	cfg.Store = h.log
	later := time.Now().Add(2 * time.Hour)
	cfg.Now = func() time.Time { return later }
	other, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = other.Shutdown(context.Background()) })
	if n := acquire(t, other, 0); n != 1 {
		t.Fatalf("the new owner brought back %d agents, want 1", n)
	}
	testkit.Eventually(t, "the scheduled tick on the new owner", func() bool {
		info, err := other.State("a1")
		return err == nil && stateOf(t, info.State)["ticks"] == 1.0
	})
	moved, err := other.lookup("a1")
	if err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, "the schedule no longer awaited on the new owner", func() bool { return len(moved.timers.snapshot().Awaiting) == 0 })
	if info, err := other.State("a1"); err != nil || info.Version != 2 {
		t.Fatalf("a1 on the new owner: %+v, %v; want version 2 (the schedule, then its tick)", info, err)
	}
}
