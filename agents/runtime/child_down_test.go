package runtime

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/jido-bus/jido-bus/internal/testkit"
)

// TestParentLearnsOfAChildDownForGood: a child that crashes past its
// restart budget is down for good, and its parent receives
// jido.agent.child.exit saying it failed, as a parent learns of a child
// that died. The child keeps its id and its link until it is stopped;
// its stop then sends no second exit: one exit per incarnation.
func TestParentLearnsOfAChildDownForGood(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.MaxRestarts = 1 })
	h.start("probe", "p", Options{})
	h.mustCall("p", "probe.spawn", map[string]any{"tag": "w1"})
	testkit.Eventually(h.t, "child.started decided by the parent", func() bool { return slices.Contains(lifecycleSeen(h, "p"), TypeChildStarted) })
	h.mustCall("p/w1", "probe.boom", nil)
	testkit.Eventually(h.t, "the child failed", func() bool { info, _ := h.rt.State("p/w1"); return info.Status == StatusFailed })
	testkit.Eventually(h.t, "child.exit decided by the parent", func() bool { return slices.Contains(lifecycleSeen(h, "p"), TypeChildExit) })
	exits := h.emittedOf(TypeChildExit)
	if len(exits) != 1 || !strings.Contains(string(exits[0].Data()), `"reason":"failed: panic`) || !strings.Contains(string(exits[0].Data()), `"tag":"w1"`) {
		t.Fatalf("child.exit published: %v", exits)
	}
	if parent, _ := h.rt.State("p"); parent.Children["w1"] != "p/w1" {
		t.Fatalf("parent children = %v: the failed child stays linked until it is stopped", parent.Children)
	}
	if err := h.rt.Stop(context.Background(), "p/w1", "cleared"); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(h.t, "the parent let go of the child", func() bool { parent, _ := h.rt.State("p"); return len(parent.Children) == 0 })
	// A signal to the parent after the stop: decided after any exit the
	// stop could have sent, so the count below is final.
	h.mustCall("p", "probe.tick", nil)
	n := 0
	for _, typ := range lifecycleSeen(h, "p") {
		if typ == TypeChildExit {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("the parent decided %d child.exit signals, want 1 (one per incarnation)", n)
	}
}
