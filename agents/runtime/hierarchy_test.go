package runtime

import (
	"slices"
	"strings"
	"testing"

	"github.com/jido-bus/jido-bus/internal/testkit"
)

func lifecycleSeen(h *harness, id string) []string {
	var out []string
	for _, v := range toList(h.state(id)["lifecycle"]) {
		out = append(out, v.(string))
	}
	return out
}

func toList(v any) []any { l, _ := v.([]any); return l }

func TestSpawnAndStopChild(t *testing.T) {
	h := newHarness(t)
	h.start("probe", "p", Options{})
	h.mustCall("p", "probe.spawn", map[string]any{"tag": "w1"})
	testkit.Eventually(h.t, "the child started", func() bool { _, err := h.rt.State("p/w1"); return err == nil })
	testkit.Eventually(h.t, "child.started decided by the parent", func() bool { return slices.Contains(lifecycleSeen(h, "p"), TypeChildStarted) })
	child, _ := h.rt.State("p/w1")
	if child.Parent == nil || child.Parent.ID != "p" || child.Parent.Tag != "w1" {
		t.Fatalf("child parent = %+v", child.Parent)
	}
	if parent, _ := h.rt.State("p"); parent.Children["w1"] != "p/w1" {
		t.Fatalf("parent children = %v", parent.Children)
	}
	h.mustCall("p", "probe.stop_child", map[string]any{"tag": "w1", "reason": "enough"})
	testkit.Eventually(h.t, "child.exit decided by the parent", func() bool { return slices.Contains(lifecycleSeen(h, "p"), TypeChildExit) })
	if _, err := h.rt.State("p/w1"); err == nil {
		t.Fatal("the child still runs")
	}
	if parent, _ := h.rt.State("p"); len(parent.Children) != 0 {
		t.Fatalf("parent still lists %v", parent.Children)
	}
	exits := h.emittedOf(TypeChildExit)
	if len(exits) != 1 || !strings.Contains(string(exits[0].Data()), `"reason":"enough"`) {
		t.Fatalf("child.exit published: %v", exits)
	}
}

func TestOnParentDeath(t *testing.T) {
	cases := []struct {
		mode      string
		childRuns bool
		orphaned  bool
	}{
		{OnParentDeathStop, false, false},
		{OnParentDeathContinue, true, false},
		{OnParentDeathEmitOrphan, true, true},
	}
	for _, c := range cases {
		t.Run(c.mode, func(t *testing.T) {
			h := newHarness(t)
			h.start("probe", "p", Options{})
			h.mustCall("p", "probe.spawn", map[string]any{"tag": "c", "mode": c.mode})
			testkit.Eventually(h.t, "child.started decided by the parent", func() bool { return slices.Contains(lifecycleSeen(h, "p"), TypeChildStarted) })
			h.mustCall("p", "probe.stop", map[string]any{"reason": "killed"})
			testkit.Eventually(h.t, "the parent gone", func() bool { _, err := h.rt.State("p"); return err != nil })
			if !c.childRuns {
				testkit.Eventually(h.t, "the child gone", func() bool { _, err := h.rt.State("p/c"); return err != nil })
				if got := h.entries("agent/p/c"); got[len(got)-1] != TypeStopped {
					t.Fatalf("child stream %v", got)
				}
				return
			}
			// The child learns of its parent's end by a signal of its own, so
			// the parent may be gone a moment before the child lets go of it.
			testkit.Eventually(h.t, "the child detached and running", func() bool {
				info, err := h.rt.State("p/c")
				return err == nil && info.Status == StatusRunning && info.Parent == nil
			})
			if c.orphaned {
				testkit.Eventually(h.t, "jido.agent.orphaned decided", func() bool { return slices.Contains(lifecycleSeen(h, "p/c"), TypeOrphaned) })
			} else if slices.Contains(lifecycleSeen(h, "p/c"), TypeOrphaned) {
				t.Fatal("orphaned without emit_orphan")
			}
		})
	}
}

func TestRestartBudget(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.MaxRestarts = 2 })
	h.start("probe", "p1", Options{})
	h.mustCall("p1", "probe.tick", nil)
	// The panicking directive is not recorded as done, so each restart runs
	// it again: two restarts, then the agent stays down and says why.
	h.mustCall("p1", "probe.boom", nil)
	testkit.Eventually(h.t, "the agent failed", func() bool { info, _ := h.rt.State("p1"); return info.Status == StatusFailed })
	info, _ := h.rt.State("p1")
	if info.Restarts != 2 || !strings.Contains(info.Reason, "panic") || !strings.Contains(info.Reason, "budget") {
		t.Fatalf("failed agent: %+v", info)
	}
	if _, err := h.call("p1", "probe.tick", nil); err == nil || !strings.Contains(err.Error(), "down") {
		t.Fatalf("a failed agent answered: %v", err)
	}
	// Others are not affected.
	h.start("counter", "c1", Options{})
	h.mustCall("c1", "counter.increment", nil)
}

func TestCrashRestoresCommittedState(t *testing.T) {
	h := newHarness(t)
	h.start("probe", "p1", Options{})
	for range 3 {
		h.mustCall("p1", "probe.tick", nil)
	}
	h.mustCall("p1", "probe.boom", nil)
	testkit.Eventually(h.t, "a restart", func() bool { info, _ := h.rt.State("p1"); return info.Restarts >= 1 })
	testkit.Eventually(h.t, "the state back", func() bool {
		info, err := h.rt.State("p1")
		return err == nil && info.Version == 4 && stateOf(t, info.State)["ticks"] == 3.0
	})
}
