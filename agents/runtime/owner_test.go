package runtime

import (
	"testing"

	"github.com/jido-bus/jido-bus/bus"
)

// TestNoLoopStartsOnceShutdownWaited: a signal that reaches an agent once
// Shutdown has waited for the runtime's goroutines (an internal delivery
// racing the shutdown, past its halt) starts no inbox loop that would
// outlive the wait and commit after it: it is refused as unavailable, as
// Shutdown refuses what it cannot commit, and the log does not get it.
func TestNoLoopStartsOnceShutdownWaited(t *testing.T) {
	h, rs := refusingHarness(t)
	h.start("counter", "c1", Options{})
	s, err := h.rt.lookup("c1")
	if err != nil {
		t.Fatal(err)
	}
	// Where Shutdown stands once it has waited, with c1 not yet halted.
	h.rt.cancel()
	h.rt.workers.Wait()

	answer := make(chan error, 1)
	if err := s.deliver(envelope{sig: signal(t, "counter.increment", nil), internal: true, reply: func(_ Reply, err error) { answer <- err }}); err != nil {
		t.Fatalf("deliver: %v, want the signal taken and then refused through its reply", err)
	}
	if err := <-answer; bus.ErrorType(err) != bus.ReasonUnavailable {
		t.Fatalf("the signal: %v, want unavailable (the runtime has shut down)", err)
	}
	for _, typ := range h.entries("agent/c1") {
		if typ == "counter.increment" {
			t.Fatal("the signal was committed after the runtime's goroutines were waited for")
		}
	}
	if got := rs.all(); len(got) != 1 || got[0].reason != bus.ReasonUnavailable {
		t.Fatalf("refused %+v, want the signal as unavailable", got)
	}
}
