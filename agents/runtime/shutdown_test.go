package runtime

import (
	"context"
	"testing"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/internal/testkit"
)

// TestCloseCommitsWhatWasQueued: signals waiting in an agent's inbox when
// the runtime closes are committed, not dropped; a signal sent once the
// close has begun is refused as unavailable.
func TestCloseCommitsWhatWasQueued(t *testing.T) {
	h, rs := refusingHarness(t)
	h.start("counter", "c1", Options{})
	g := h.gateAppends("c1")
	var rest []bus.Signal
	for range 9 {
		rest = append(rest, signal(t, "counter.increment", map[string]int{"by": 1}))
	}
	h.queueBehindCommit("c1", signal(t, "counter.increment", map[string]int{"by": 1}), rest...)
	closed := make(chan error, 1)
	go func() { closed <- h.rt.Shutdown(context.Background()) }()
	testkit.Eventually(h.t, "the close begun", h.rt.shuttingDown.Load)
	if err := h.rt.Cast("c1", signal(t, "counter.increment", nil)); bus.ErrorType(err) != bus.ReasonUnavailable {
		t.Fatalf("a cast during the close: %v, want unavailable", err)
	}
	close(g.gate)
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, typ := range h.entries("agent/c1") {
		if typ == "counter.increment" {
			n++
		}
	}
	if n != 10 || len(rs.all()) != 0 {
		t.Fatalf("%d of 10 queued casts committed, %d refused", n, len(rs.all()))
	}
}

// TestShutdownRefusesWhatItCannotCommit: a signal still queued when the
// shutdown's time runs out is refused loudly (OnRefused, and unavailable
// to its caller), never dropped.
func TestShutdownRefusesWhatItCannotCommit(t *testing.T) {
	h, rs := refusingHarness(t)
	h.start("counter", "c1", Options{})
	g := h.gateAppends("c1")
	s := h.queueBehindCommit("c1", signal(t, "counter.increment", map[string]int{"by": 1}))
	answer := make(chan error, 1)
	if err := h.rt.Deliver("c1", signal(t, "counter.increment", nil), func(_ Reply, err error) { answer <- err }); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(h.t, "the call queued", func() bool { s.mu.Lock(); defer s.mu.Unlock(); return len(s.inbox) == 1 })
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // no time at all
	done := make(chan error, 1)
	go func() { done <- h.rt.Shutdown(ctx) }()
	if err := <-answer; bus.ErrorType(err) != bus.ReasonUnavailable {
		t.Fatalf("the queued call: %v, want unavailable", err)
	}
	close(g.gate)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := rs.all(); len(got) != 1 || got[0].reason != bus.ReasonUnavailable {
		t.Fatalf("refused %+v, want the queued call as unavailable", got)
	}
}
