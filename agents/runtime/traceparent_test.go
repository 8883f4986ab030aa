package runtime

import (
	"testing"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/jido-bus/jido-bus/internal/testkit"
)

// TestTraceParentFollowsTheInput: a signal an agent emits carries its
// input's traceparent, as does the result of a task the input started,
// and the log replays with --verify to the same decisions.
func TestTraceParentFollowsTheInput(t *testing.T) {
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	h := newHarness(t)
	h.start("probe", "p1", Options{})
	for _, typ := range []string{"probe.emit", "probe.run"} {
		sig := signal(t, typ, map[string]any{"n": 1})
		sig.SetExtension(bus.ExtTraceParent, tp)
		if _, err := h.rt.Call(t.Context(), "p1", sig); err != nil {
			t.Fatal(err)
		}
	}
	testkit.Eventually(h.t, "the emit", func() bool { return len(h.emittedOf("probe.emitted")) == 1 })
	if got := h.emittedOf("probe.emitted")[0].Extensions()[bus.ExtTraceParent]; got != tp {
		t.Fatalf("emitted traceparent %v, want the input's", got)
	}
	testkit.Eventually(h.t, "the task result", func() bool { return h.state("p1")["result"] == 2.0 })
	for e, err := range h.log.ReadStream("agent/p1", eventlog.ReadOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		if e.Event.Type() == TypeInstructionResult {
			if got := e.Event.Extensions()[bus.ExtTraceParent]; got != tp {
				t.Fatalf("task result traceparent %v, want the input's", got)
			}
		}
	}
	res, err := Replay(h.log.ReadStream("agent/p1", eventlog.ReadOptions{}), h.cfg.Types, h.cfg.Directives, ReplayOptions{Verify: true})
	if err != nil || res.Divergence != nil || res.Signals != 3 {
		t.Fatalf("replay --verify: %+v %v", res, err)
	}
}
