package runtime

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/jido-bus/jido-bus/internal/testkit"
)

// TestTaskResultsOfInputsWithOneIDFromTwoSources: ids are unique per
// source, so two inputs may share one; the tasks they start must not. Each
// gets a result signal of its own id, and both results are decided.
func TestTaskResultsOfInputsWithOneIDFromTwoSources(t *testing.T) {
	h := newHarness(t)
	h.start("probe", "p1", Options{})
	for i, source := range []string{"/client/a", "/client/b"} {
		sig := signal(t, "probe.run", map[string]any{"n": i + 1})
		sig.SetID("same")
		sig.SetSource(source)
		if _, err := h.rt.Call(t.Context(), "p1", sig); err != nil {
			t.Fatal(err)
		}
	}
	s, err := h.rt.lookup("p1")
	if err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(h.t, "no task result awaited", func() bool { return len(s.timers.snapshot().Awaiting) == 0 })

	ids := map[string]bool{}
	var results []float64
	for e, err := range h.log.ReadStream("agent/p1", eventlog.ReadOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		if e.Event.Type() != TypeInstructionResult {
			continue
		}
		ids[e.Event.ID()] = true
		var res instructionResult
		if err := json.Unmarshal(e.Event.Data(), &res); err != nil {
			t.Fatal(err)
		}
		var n float64
		if err := json.Unmarshal(res.Result, &n); err != nil {
			t.Fatalf("result %s: %v", res.Result, err)
		}
		results = append(results, n)
	}
	slices.Sort(results)
	if len(ids) != 2 || !slices.Equal(results, []float64{2, 4}) {
		t.Fatalf("task results %v with ids %v, want 2 and 4 under two ids", results, ids)
	}
}
