package runtime

import (
	"context"
	"errors"
	"testing"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/eventlog"
)

// TestStartAgainUnderTheSameID: an agent stopped and started again under
// the same id is a new incarnation of the same stream. Each incarnation
// comes back after a restart with its own state (never the earlier one's,
// not from the earlier one's snapshot), and goes for good when stopped.
// Its runtime records and lifecycle signals do not repeat the earlier
// incarnation's ids, which the log would drop as duplicates.
func TestStartAgainUnderTheSameID(t *testing.T) {
	for _, every := range []int{MaxSnapshotEvery, 1} { // without and with snapshots
		h := newHarness(t)
		for round := 1; round <= 3; round++ {
			h.start("counter", "c1", Options{SnapshotEvery: every})
			for range round {
				h.mustCall("c1", "counter.increment", nil)
			}
			if n := h.restart(); n != 1 {
				t.Fatalf("snapshot_every=%d round %d: recovered %d agents, want 1", every, round, n)
			}
			info, err := h.rt.State("c1")
			if err != nil {
				t.Fatalf("snapshot_every=%d round %d: c1 after a restart: %v", every, round, err)
			}
			if info.Version != uint64(round) || stateOf(t, info.State)["count"] != float64(round) {
				t.Fatalf("snapshot_every=%d round %d: c1 after a restart: v%d %s", every, round, info.Version, info.State)
			}
			if err := h.rt.Stop(t.Context(), "c1", "done"); err != nil {
				t.Fatal(err)
			}
			h.restart()
			if _, err := h.rt.State("c1"); !errors.Is(err, ErrNotFound) {
				t.Fatalf("snapshot_every=%d round %d: a stopped c1 after a restart: %v", every, round, err)
			}
		}
		for _, typ := range []string{TypeStarted, TypeStopped} {
			ids := map[string]bool{}
			for _, s := range h.emittedOf(typ) {
				ids[s.Source()+" "+s.ID()] = true
			}
			if len(ids) != 3 {
				t.Fatalf("snapshot_every=%d: %s emitted with %d distinct source+id, want 3: %v", every, typ, len(ids), ids)
			}
		}
	}
}

// TestStartRefusesALiveStream: Start under the id of an agent whose
// stream is open (started and not stopped) but that this runtime does not
// hold is refused; it does not write a second start into the stream.
func TestStartRefusesALiveStream(t *testing.T) {
	h := newHarness(t)
	h.start("counter", "c1", Options{})
	h.mustCall("c1", "counter.increment", nil)
	// A second runtime on the same log does not hold c1.
	cfg := h.cfg
	cfg.Store = h.log
	rt2, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer rt2.Shutdown(context.Background())
	_, err = rt2.Start(t.Context(), StartRequest{Type: "counter", ID: "c1"})
	if bus.ErrorType(err) != ReasonAlreadyExists {
		t.Fatalf("start over a live stream: %v, want %s", err, ReasonAlreadyExists)
	}
}

// TestReplayAcrossIncarnations: Replay (jido-bus log replay) starts over
// at each started record, so --verify agrees with every incarnation's
// decisions and the state is the last incarnation's.
func TestReplayAcrossIncarnations(t *testing.T) {
	h := newHarness(t)
	h.start("counter", "c1", Options{})
	h.mustCall("c1", "counter.increment", map[string]int{"by": 7})
	if err := h.rt.Stop(t.Context(), "c1", "done"); err != nil {
		t.Fatal(err)
	}
	h.start("counter", "c1", Options{})
	h.mustCall("c1", "counter.increment", nil)
	h.mustCall("c1", "counter.increment", nil)
	res, err := Replay(h.log.ReadStream("agent/c1", eventlog.ReadOptions{}), h.cfg.Types, h.cfg.Directives, ReplayOptions{Verify: true})
	if err != nil || res.Divergence != nil {
		t.Fatalf("replay: %v, divergence %+v", err, res.Divergence)
	}
	if res.Version != 2 || stateOf(t, res.State)["count"] != 2.0 {
		t.Fatalf("replay: v%d %s, want v2 count 2", res.Version, res.State)
	}
}
