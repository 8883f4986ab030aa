package runtime

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/jido-bus/jido-bus/internal/testkit"
	"github.com/jido-bus/jido-bus/schemas"
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
	testkit.Eventually(h.t, "probe.emitted", func() bool { return len(h.emittedOf("probe.emitted")) == 1 })
	for _, typ := range []string{"probe.emitted", TypeStarted} {
		for _, s := range h.emittedOf(typ) {
			if s.Time().IsZero() {
				t.Errorf("%s %s was emitted without time", typ, s.ID())
			}
		}
	}
}

// TestLifecycleSignalsHaveSchemas: every lifecycle signal the runtime
// emits (jido.agent.*) is described by a built-in schema that accepts it,
// so 'jido-bus schema ls' lists all of them.
func TestLifecycleSignalsHaveSchemas(t *testing.T) {
	reg, err := schemas.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t)
	h.start("probe", "p1", Options{})
	h.mustCall("p1", "probe.spawn", map[string]any{"tag": "k"})
	testkit.Eventually(h.t, "the child", func() bool { return len(h.emittedOf(TypeChildStarted)) == 1 })
	if err := h.rt.Stop(context.Background(), "p1", "done"); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(h.t, "the stops", func() bool { return len(h.emittedOf(TypeStopped)) == 2 })
	for _, typ := range []string{TypeStarted, TypeStopped, TypeChildStarted, TypeChildExit} {
		sigs := h.emittedOf(typ)
		if len(sigs) == 0 {
			t.Errorf("no %s emitted", typ)
		}
		for _, s := range sigs {
			b, err := json.Marshal(s)
			if err != nil {
				t.Fatal(err)
			}
			var v any
			if err := json.Unmarshal(b, &v); err != nil {
				t.Fatal(err)
			}
			if err := reg.Validate(typ, v); err != nil {
				t.Errorf("%s: %v\n%s", typ, err, b)
			}
		}
	}
}
