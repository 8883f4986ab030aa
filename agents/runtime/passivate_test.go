package runtime

import (
	"testing"
	"time"
)

func passivating(c *Config) { c.PassivateAfter = 30 * time.Millisecond }

func (h *harness) waitPassive(id string) Info {
	h.t.Helper()
	var info Info
	h.eventually(id+" passive", func() bool {
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
	h.eventually("the broadcast decided", func() bool {
		info, _ := h.rt.State("c1")
		return info.Version == 3
	})
}

func TestPassiveAgentTimersStillFire(t *testing.T) {
	h := newHarness(t, passivating)
	h.start("probe", "p1", Options{})
	h.mustCall("p1", "probe.schedule", map[string]any{"ms": 300})
	h.waitPassive("p1")
	h.eventually("the scheduled tick", func() bool {
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

func TestAgentsWithChildrenStayActive(t *testing.T) {
	h := newHarness(t, passivating)
	h.start("probe", "p", Options{})
	h.mustCall("p", "probe.spawn", map[string]any{"tag": "w"})
	h.eventually("the child", func() bool { _, err := h.rt.State("p/w"); return err == nil })
	time.Sleep(150 * time.Millisecond) // several janitor rounds; not a timing assertion
	for _, id := range []string{"p", "p/w"} {
		if info, _ := h.rt.State(id); info.Status != StatusRunning {
			t.Fatalf("%s is %s", id, info.Status)
		}
	}
}
