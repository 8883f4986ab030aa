package runtime

import (
	"testing"

	"github.com/jido-bus/jido-bus/internal/testkit"
)

// stopBegun reports whether agent id is stopping (its status set, its
// stop not finished) or gone.
func stopBegun(h *harness, id string) bool {
	h.rt.mu.RLock()
	s := h.rt.agents[id]
	h.rt.mu.RUnlock()
	if s == nil {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.status == StatusStopped
}

// stopWhileHeld stops agent id once the directive behind gate runs, and
// lets the directive finish once the stop has begun.
func stopWhileHeld(t *testing.T, h *harness, id, gate string) {
	t.Helper()
	testkit.Eventually(t, "the directive running", func() bool {
		h.rt.mu.RLock()
		s := h.rt.agents[id]
		h.rt.mu.RUnlock()
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.executing
	})
	stopped := make(chan error, 1)
	go func() { stopped <- h.rt.Stop(t.Context(), id, "enough") }()
	testkit.Eventually(t, "the stop begun", func() bool { return stopBegun(h, id) })
	h.open(gate)
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
}

// TestStopRecordsTheDirectiveInHand: a stop that comes while a directive
// runs records that directive's outcome, not only the ones noted before —
// the stop used to take the noted outcomes at once, and the outcome of
// the directive in hand, noted after, went nowhere (an emit published
// and never recorded as such).
func TestStopRecordsTheDirectiveInHand(t *testing.T) {
	h := newHarness(t)
	h.start("probe", "p1", Options{})
	h.gate("held")
	if _, err := h.rt.Call(t.Context(), "p1", signal(t, "probe.block_emit", map[string]any{"name": "held"})); err != nil {
		t.Fatal(err)
	}
	stopWhileHeld(t, h, "p1", "held")
	o := h.outcomes("agent/p1")
	if o["1/0"] != OutcomeOK {
		t.Errorf("outcomes %v: the directive running when the stop came is not recorded %q", o, OutcomeOK)
	}
	if o["1/1"] != OutcomeDropped {
		t.Errorf("outcomes %v: the emit queued behind it is not recorded %q", o, OutcomeDropped)
	}
}
