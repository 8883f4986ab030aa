package runtime

import (
	"context"
	"testing"
	"time"
)

// TestEmittedSignalsCarryTime: an Emit directive's signal is built in the
// pure layer, which has no clock, so it has no time; the runtime stamps it
// with its decision's commit time before dispatching it, so every signal
// an agent emits carries time (and the same time when emitted again after
// recovery). Lifecycle signals carry it too.
func TestEmittedSignalsCarryTime(t *testing.T) {
	h := newHarness(t)
	h.start("probe", "p1", Options{})
	// A signal without time (CloudEvents makes it optional): what it
	// makes the agent emit has none to inherit.
	in := signal(t, "probe.emit", map[string]any{"n": 1})
	in.SetTime(time.Time{})
	if !in.Time().IsZero() {
		t.Fatal("the test signal has a time")
	}
	if _, err := h.rt.Call(context.Background(), "p1", in); err != nil {
		t.Fatal(err)
	}
	h.eventually("probe.emitted", func() bool { return len(h.emittedOf("probe.emitted")) == 1 })
	for _, typ := range []string{"probe.emitted", TypeStarted} {
		for _, s := range h.emittedOf(typ) {
			if s.Time().IsZero() {
				t.Errorf("%s %s was emitted without time", typ, s.ID())
			}
		}
	}
}
