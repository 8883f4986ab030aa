package runtime

import (
	"context"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/jido-bus/jido-bus/internal/testkit"
)

func passivating(c *Config) { c.PassivateAfter = 30 * time.Millisecond }

func (h *harness) waitPassive(id string) Info {
	h.t.Helper()
	var info Info
	testkit.Eventually(h.t, id+" passive", func() bool {
		var err error
		info, err = h.rt.State(id)
		return err == nil && info.Status == StatusPassive
	})
	return info
}

func TestPassiveAgentComesBackOnItsNextSignal(t *testing.T) {
	h := newHarness(t, passivating)
	h.start("counter", "c1", Options{})
	h.mustCall("c1", "counter.increment", map[string]int{"by": 4})
	info := h.waitPassive("c1")
	if info.Version != 1 || stateOf(t, info.State)["count"] != 4.0 {
		t.Fatalf("passive state from the snapshot: %+v", info)
	}
	if l := h.rt.List(); len(l) != 1 || l[0].Status != StatusPassive {
		t.Fatalf("list = %+v", l)
	}
	// The reply is the same as if it had stayed active.
	r := h.mustCall("c1", "counter.increment", map[string]int{"by": 1})
	if r.Version != 2 || stateOf(t, r.State)["count"] != 5.0 {
		t.Fatalf("first call after passivation: %s v%d", r.State, r.Version)
	}
	if info, _ := h.rt.State("c1"); info.Status != StatusRunning {
		t.Fatalf("status after the call: %s", info.Status)
	}
	// Passive again, then a broadcast wakes it too.
	h.waitPassive("c1")
	if n, err := h.rt.Broadcast(signal(t, "counter.increment", nil)); err != nil || n != 1 {
		t.Fatalf("broadcast to a passive agent: %d %v", n, err)
	}
	testkit.Eventually(h.t, "the broadcast decided", func() bool {
		info, _ := h.rt.State("c1")
		return info.Version == 3
	})
}

func TestPassiveAgentTimersStillFire(t *testing.T) {
	h := newHarness(t, passivating)
	h.start("probe", "p1", Options{})
	h.mustCall("p1", "probe.schedule", map[string]any{"ms": 300})
	h.waitPassive("p1")
	testkit.Eventually(h.t, "the scheduled tick", func() bool {
		info, err := h.rt.State("p1")
		return err == nil && stateOf(t, info.State)["ticks"] == 1.0
	})
}

func TestPassivationSurvivesRestart(t *testing.T) {
	h := newHarness(t, passivating)
	h.start("counter", "c1", Options{})
	h.mustCall("c1", "counter.increment", map[string]int{"by": 7})
	h.waitPassive("c1")
	// An agent with a timer awaited comes back active, passive or not
	// before: only an active agent serves timers.
	h.start("probe", "p1", Options{})
	h.mustCall("p1", "probe.schedule", map[string]any{"ms": 3_600_000})
	h.cfg.PassivateAfter = time.Hour // nothing passivates after the restart
	if n := h.restart(); n != 2 {
		t.Fatalf("recovered %d", n)
	}
	// The agent that was passive comes back passive, without a replay.
	if info, err := h.rt.State("c1"); err != nil || info.Status != StatusPassive || stateOf(t, info.State)["count"] != 7.0 {
		t.Fatalf("c1 after restart: %+v %v", info, err)
	}
	if info, err := h.rt.State("p1"); err != nil || info.Status != StatusRunning {
		t.Fatalf("p1 after restart: %+v %v", info, err)
	}
	if r := h.mustCall("c1", "counter.increment", nil); stateOf(t, r.State)["count"] != 8.0 || r.Version != 2 {
		t.Fatalf("after restart: %s v%d", r.State, r.Version)
	}
}

// TestParentsAndChildrenPassivate: a hierarchy goes passive like any
// agent, keeps its links while passive and across a restart, and its
// signals (stop_child, child.exit, orphaned) reach passive members.
func TestParentsAndChildrenPassivate(t *testing.T) {
	h := newHarness(t, passivating)
	h.start("probe", "p", Options{})
	h.mustCall("p", "probe.spawn", map[string]any{"tag": "w"})
	h.mustCall("p", "probe.spawn", map[string]any{"tag": "o", "mode": OnParentDeathEmitOrphan})
	testkit.Eventually(h.t, "both child.started decided", func() bool {
		return len(slices.DeleteFunc(lifecycleSeen(h, "p"), func(s string) bool { return s != TypeChildStarted })) == 2
	})
	family := func(when string) {
		t.Helper()
		p, w, o := h.waitPassive("p"), h.waitPassive("p/w"), h.waitPassive("p/o")
		if !maps.Equal(p.Children, map[string]string{"w": "p/w", "o": "p/o"}) || p.Parent != nil {
			t.Fatalf("%s: parent %+v", when, p)
		}
		if w.Parent == nil || w.Parent.ID != "p" || w.Parent.Tag != "w" || o.Parent == nil || o.Parent.Tag != "o" {
			t.Fatalf("%s: children %+v %+v", when, w.Parent, o.Parent)
		}
	}
	family("passive")
	if n := h.restart(); n != 3 {
		t.Fatalf("recovered %d", n)
	}
	family("after a restart")

	// The passive parent's stop_child stops its passive child, and the
	// child.exit reaches the parent.
	h.mustCall("p", "probe.stop_child", map[string]any{"tag": "w", "reason": "enough"})
	testkit.Eventually(h.t, "p/w gone", func() bool { _, err := h.rt.State("p/w"); return err != nil })
	testkit.Eventually(h.t, "child.exit decided by the parent", func() bool { return slices.Contains(lifecycleSeen(h, "p"), TypeChildExit) })
	if info, _ := h.rt.State("p"); !maps.Equal(info.Children, map[string]string{"o": "p/o"}) {
		t.Fatalf("children after stop_child: %v", info.Children)
	}

	// The parent's end reaches its passive orphan.
	h.waitPassive("p/o")
	h.mustCall("p", "probe.stop", map[string]any{"reason": "done"})
	testkit.Eventually(h.t, "orphaned decided by p/o", func() bool { return slices.Contains(lifecycleSeen(h, "p/o"), TypeOrphaned) })
	if info, err := h.rt.State("p/o"); err != nil || info.Parent != nil {
		t.Fatalf("orphan: %+v %v", info, err)
	}
}

// TestAgentWithoutSignalsPassivates: an agent started and never sent
// anything passivates with a snapshot of its initial state, which State
// reads and a restart brings back passive.
func TestAgentWithoutSignalsPassivates(t *testing.T) {
	h := newHarness(t, passivating)
	h.start("counter", "c0", Options{})
	if info := h.waitPassive("c0"); info.Version != 0 || stateOf(t, info.State)["count"] != 0.0 {
		t.Fatalf("passive before any signal: %+v", info)
	}
	if n := h.restart(); n != 1 {
		t.Fatalf("recovered %d", n)
	}
	h.waitPassive("c0")
	if r := h.mustCall("c0", "counter.increment", nil); r.Version != 1 || stateOf(t, r.State)["count"] != 1.0 {
		t.Fatalf("first call: %s v%d", r.State, r.Version)
	}
}

// TestPassivationWaitsForAnEffectsRecord: an agent that goes passive while
// the effects recorder writes its outcomes snapshots after them, with
// nothing left pending, so that it comes back passive after a restart.
func TestPassivationWaitsForAnEffectsRecord(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.PassivateAfter, c.EffectsLinger = time.Hour, time.Hour })
	h.start("counter", "c1", Options{})
	h.mustCall("c1", "counter.increment", map[string]int{"by": 7})
	s, err := h.rt.lookup("c1")
	if err != nil {
		t.Fatal(err)
	}
	owes := func() int {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.queueRunning {
			return -1
		}
		return len(s.effects)
	}
	testkit.Eventually(h.t, "the emit's outcome noted", func() bool { return owes() == 1 })
	g := h.gateAppends("c1")
	recorded := make(chan struct{})
	go func() {
		defer close(recorded)
		h.rt.recordOwedEffects(true)
	}()
	testkit.Eventually(h.t, "the recorder took the outcome", func() bool { return owes() == 0 })
	passivated := make(chan bool, 1)
	go func() { passivated <- s.tryPassivate(time.Now().Add(2 * time.Hour)) }()
	testkit.Eventually(h.t, "passivation under way", func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.status == StatusPassive
	})
	// Passivation gets as far as it can while the record is held: it
	// waits for the record, or it is done (snapshotting before it).
	testkit.Eventually(h.t, "passivation waiting for the record in flight, or done", func() bool {
		return len(passivated) == 1 || testkit.BlockedIn("agents/runtime.(*server).passivate")
	})
	close(g.gate)
	<-recorded
	if !<-passivated {
		t.Fatal("the agent did not go passive")
	}
	rec, err := h.rt.readStarted(s.stream, s.born)
	if err != nil {
		t.Fatal(err)
	}
	if !h.rt.settled(rec) {
		snap, _ := h.log.LoadSnapshot(s.stream)
		t.Fatalf("the passivation snapshot at %d leaves the agent to be restored: %s", snap.Version, snap.Data)
	}
}

// TestPassivationSnapshotsAfterRecordedOutcomes: an agent snapshotted at
// its last decision, whose emit was still pending then, snapshots again
// when it goes passive after the emit's outcome is recorded, so that it
// comes back passive after a restart.
func TestPassivationSnapshotsAfterRecordedOutcomes(t *testing.T) {
	h := newHarness(t, passivating, func(c *Config) { c.EffectsLinger = 10 * time.Millisecond })
	h.start("counter", "c1", Options{SnapshotEvery: 1})
	h.mustCall("c1", "counter.increment", map[string]int{"by": 7})
	h.waitPassive("c1")
	rec, err := h.rt.readStarted("agent/c1", 1)
	if err != nil {
		t.Fatal(err)
	}
	if !h.rt.settled(rec) {
		snap, _ := h.log.LoadSnapshot("agent/c1")
		t.Fatalf("the snapshot at %d leaves the passive agent to be restored: %s", snap.Version, snap.Data)
	}
	h.cfg.PassivateAfter = time.Hour
	h.restart()
	if info, err := h.rt.State("c1"); err != nil || info.Status != StatusPassive || stateOf(t, info.State)["count"] != 7.0 {
		t.Fatalf("c1 after restart: %+v %v", info, err)
	}
}

// TestPassiveWakeUpTimerIsOwned: the timer that activates a passive agent
// for its next due timer belongs to the runtime: Shutdown stops it, so no
// clock of a closed runtime is left armed.
func TestPassiveWakeUpTimerIsOwned(t *testing.T) {
	h := newHarness(t, passivating)
	h.start("probe", "p1", Options{})
	h.mustCall("p1", "probe.schedule", map[string]any{"ms": 3_600_000})
	h.waitPassive("p1")
	h.rt.mu.RLock()
	wake := h.rt.wakes["p1"]
	h.rt.mu.RUnlock()
	if wake == nil {
		t.Fatal("a passive agent with a timer due has no wake-up timer")
	}
	if err := h.rt.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if wake.Stop() {
		t.Fatal("the wake-up timer was still armed after Shutdown")
	}
}
