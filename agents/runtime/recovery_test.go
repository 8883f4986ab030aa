package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jido-bus/jido-bus/agents"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/jido-bus/jido-bus/internal/testkit"
)

func TestRecoverRestoresAgents(t *testing.T) {
	for _, every := range []int{MaxSnapshotEvery, 2} { // without (none within 5 signals) and with snapshots
		h := newHarness(t)
		h.start("counter", "c1", Options{SnapshotEvery: every})
		h.start("counter", "c2", Options{SnapshotEvery: every})
		for i := range 5 {
			h.mustCall("c1", "counter.increment", map[string]int{"by": i + 1})
		}
		h.mustCall("c2", "counter.decrement", nil)
		if err := h.rt.Stop(t.Context(), "c2", "done"); err != nil {
			t.Fatal(err)
		}
		if n := h.restart(); n != 1 {
			t.Fatalf("snapshot_every=%d: recovered %d agents, want 1", every, n)
		}
		info, err := h.rt.State("c1")
		if err != nil || info.Version != 5 || stateOf(t, info.State)["count"] != 15.0 {
			t.Fatalf("snapshot_every=%d: c1 after recovery: %+v %v", every, info, err)
		}
		if _, err := h.rt.State("c2"); err == nil {
			t.Fatal("a stopped agent came back")
		}
		r := h.mustCall("c1", "counter.increment", nil)
		if r.Version != 6 || stateOf(t, r.State)["count"] != 16.0 {
			t.Fatalf("after recovery: %s v%d", r.State, r.Version)
		}
	}
}

// TestRecoveryValidatesRefusedParams: recovery replays decisions without
// validating params again only where the decision shows no Error. Params
// the counter's schema refuses but its action would read ({"by":2} with a
// member too many) must stay refused after a restart.
func TestRecoveryValidatesRefusedParams(t *testing.T) {
	h := newHarness(t)
	h.start("counter", "c", Options{SnapshotEvery: MaxSnapshotEvery}) // no snapshot: recovery replays
	if _, err := h.call("c", "counter.increment", json.RawMessage(`{"by":2,"extra":1}`)); err == nil {
		t.Fatal("the counter took params its schema refuses")
	}
	h.mustCall("c", "counter.increment", map[string]int{"by": 3})
	h.restart()
	if got := h.state("c")["count"]; got != 3.0 {
		t.Fatalf("count after recovery %v, want 3", got)
	}
}

// TestGlance pins what recovery looks for in a decision's encoded
// directives to what the codec writes.
func TestGlance(t *testing.T) {
	codec := agents.NewDirectiveCodec()
	emit, err := agents.NewEmit("x.done", map[string]string{"note": `"kind":"error" and "kind":"schedule" in data`})
	if err != nil {
		t.Fatal(err)
	}
	refused := agents.Error{Err: bus.Errorf(agents.ReasonInvalidParams, "refused"), Context: agents.ContextParams}
	for _, tc := range []struct {
		dirs []agents.Directive
		want decidedKinds
	}{
		{nil, decidedKinds{}},
		{[]agents.Directive{emit, agents.Stop{Reason: "error"}}, decidedKinds{}},
		{[]agents.Directive{refused}, decidedKinds{errors: true}},
		{[]agents.Directive{agents.Stop{}, agents.Error{Err: bus.Errorf("custom", "x")}}, decidedKinds{errors: true}},
		{[]agents.Directive{agents.Schedule{Delay: time.Second, Signal: emit.Signal}}, decidedKinds{timers: true}},
		{[]agents.Directive{agents.CronCancel{JobID: "j"}, refused}, decidedKinds{timers: true, errors: true}},
		{[]agents.Directive{agents.ScheduleCancel{SignalID: "s"}}, decidedKinds{timers: true}},
		{[]agents.Directive{agents.Cron{JobID: "j", Expr: "* * * * *"}}, decidedKinds{timers: true}},
		{[]agents.Directive{agents.RunInstruction{Instruction: agents.Instruction{Action: "a"}}}, decidedKinds{timers: true}},
	} {
		raw, err := codec.EncodeAll(tc.dirs)
		if err != nil {
			t.Fatal(err)
		}
		if got := glance(raw); got != tc.want {
			t.Errorf("glance(%s) = %+v, want %+v", raw, got, tc.want)
		}
	}
}

// TestInFlight: a decision leaves the in-flight set when the outcome of its
// last directive is recorded; one without directives never enters it, one
// from before directive counts never leaves; what is left comes oldest
// first, whatever order the decisions were added in.
func TestInFlight(t *testing.T) {
	f := &inFlight{}
	for v, count := range map[uint64]int{1: 2, 2: 0, 3: 1, 4: -1, 5: 1} {
		f.add(pendingCmd{version: v, count: count})
	}
	f.done(1, 0)
	f.done(3, 0)
	f.done(4, 0)
	f.done(9, 0) // an outcome of a decision not in flight is ignored
	if got := inFlightVersions(f); !slices.Equal(got, []uint64{1, 4, 5}) {
		t.Fatalf("in flight %v, want [1 4 5]", got)
	}
	f.done(1, 1)
	if got := inFlightVersions(f); !slices.Equal(got, []uint64{4, 5}) || f.open != 2 {
		t.Fatalf("after the last outcome of 1: %v (open %d)", got, f.open)
	}
	f.done(1, 1) // a finished decision's outcome again: ignored
	f.add(pendingCmd{version: 3, count: 1})
	if got := inFlightVersions(f); !slices.Equal(got, []uint64{3, 4, 5}) || f.open != 3 {
		t.Fatalf("a finished version added again: %v (open %d)", got, f.open)
	}
}

// TestInFlightOutcomes: an outcome counts once however often it is
// recorded, indexes past 64 and negative ones count as the map did, and
// only the outcomes left out are pending.
func TestInFlightOutcomes(t *testing.T) {
	f := &inFlight{}
	f.add(pendingCmd{version: 1, count: 4})
	for _, i := range []int{70, 70, -1, 0, 0} {
		f.done(1, i)
	}
	pc := f.inOrder()
	if len(pc) != 1 || pc[0].done.n != 3 {
		t.Fatalf("in flight %d, done %+v; want one decision with 3 outcomes", len(pc), pc)
	}
	for i, want := range map[int]bool{0: true, 1: false, 63: false, 70: true, -1: true, 64: false} {
		if got := pc[0].done.has(i); got != want {
			t.Errorf("done.has(%d) = %v, want %v", i, got, want)
		}
	}
	f.add(pendingCmd{version: 2, count: 2})
	f.done(2, 1)
	f.done(1, 2) // the fourth distinct outcome: finished
	if got := inFlightVersions(f); !slices.Equal(got, []uint64{2}) {
		t.Fatalf("in flight %v, want [2]", got)
	}
	if pc := f.inOrder(); !pc[0].done.has(1) || pc[0].done.has(0) {
		t.Fatalf("decision 2 done %+v, want only 1", pc[0].done)
	}
}

// TestInFlightHoldsWhatIsInFlight: a decision whose outcome never comes,
// followed by many that finish, leaves a list about as long as what is in
// flight, not one entry per decision read.
func TestInFlightHoldsWhatIsInFlight(t *testing.T) {
	f := &inFlight{}
	f.add(pendingCmd{version: 1, count: 1})
	for v := uint64(2); v < 10_000; v++ {
		f.add(pendingCmd{version: v, count: 1})
		if v%100 != 0 {
			f.done(v, 0)
		}
	}
	want := []uint64{1}
	for v := uint64(100); v < 10_000; v += 100 {
		want = append(want, v)
	}
	if got := inFlightVersions(f); !slices.Equal(got, want) {
		t.Fatalf("in flight %v, want %v", got, want)
	}
	if cap(f.list) > 4*f.open+64 {
		t.Fatalf("the list has room for %d decisions for %d in flight", cap(f.list), f.open)
	}
	// Emptied, it serves the next agent from its start.
	f.release()
	f = inFlights.Get().(*inFlight)
	for v := uint64(1); v <= 3; v++ {
		f.add(pendingCmd{version: v, count: 1})
	}
	f.done(2, 0)
	if got := inFlightVersions(f); !slices.Equal(got, []uint64{1, 3}) || f.open != 2 {
		t.Fatalf("reused: in flight %v (open %d), want [1 3]", got, f.open)
	}
}

func inFlightVersions(f *inFlight) []uint64 {
	var got []uint64
	for _, pc := range f.inOrder() {
		got = append(got, pc.version)
	}
	return got
}

// TestRecoveryRunsPendingDirectives: a directive committed but never run
// (the process died while an earlier one blocked) runs after recovery,
// and an emit is re-published with the same CloudEvent id.
func TestRecoveryRunsPendingDirectives(t *testing.T) {
	h := newHarness(t)
	h.start("probe", "p1", Options{})
	// Create the gate now: the block may not have started running when
	// restart opens the gates, and a gate made later would stay shut.
	h.gate("never")
	h.mustCall("p1", "probe.block", map[string]any{"name": "never"})
	sig := signal(t, "probe.emit", map[string]any{"n": 1})
	if _, err := h.rt.Call(t.Context(), "p1", sig); err != nil {
		t.Fatal(err)
	}
	if n := len(h.emittedOf("probe.emitted")); n != 0 {
		t.Fatalf("the emit ran behind a blocked directive (%d)", n)
	}
	// Simulate a crash: the runtime goes away without recording outcomes.
	// (restart opens the gates so the old loop can finish; its outcome
	// cannot be recorded once the runtime is closing.)
	if n := h.restart(); n != 1 {
		t.Fatalf("recovered %d", n)
	}
	testkit.EventuallyNil(t, "the pending emit to run", func() error {
		if len(h.emittedOf("probe.emitted")) == 0 {
			info, err := h.rt.State("p1")
			return fmt.Errorf("stream %v, agent %+v %v", h.entries("agent/p1"), info, err)
		}
		return nil
	})
	e := h.emittedOf("probe.emitted")[0]
	if e.ID() != agents.DeriveID(agents.OriginKey(agents.OriginOf(sig), "p1"), 0) {
		t.Fatalf("re-published emit has id %q", e.ID())
	}
}

// TestRecoveryRunsPendingDirectivesOfTheSnapshot: a snapshot taken right
// after a decision counts that decision's own directives as pending, so a
// crash before they ran still runs them again — recovery starts reading
// at the signal of the oldest decision with directives pending.
func TestRecoveryRunsPendingDirectivesOfTheSnapshot(t *testing.T) {
	h := newHarness(t)
	h.start("probe", "p1", Options{SnapshotEvery: 1})
	h.gate("never")
	// One decision, snapshotted at once, whose block holds up its emit.
	sig := signal(t, "probe.block_emit", map[string]any{"name": "never", "n": 1})
	if _, err := h.rt.Call(t.Context(), "p1", sig); err != nil {
		t.Fatal(err)
	}
	if n := len(h.emittedOf("probe.emitted")); n != 0 {
		t.Fatalf("the emit ran behind a blocked directive (%d)", n)
	}
	if n := h.restart(); n != 1 {
		t.Fatalf("recovered %d", n)
	}
	testkit.Eventually(h.t, "the emit of the snapshotted decision", func() bool { return len(h.emittedOf("probe.emitted")) >= 1 })
	if e := h.emittedOf("probe.emitted")[0]; e.ID() != agents.DeriveID(agents.OriginKey(agents.OriginOf(sig), "p1"), 1) {
		t.Fatalf("re-published emit has id %q", e.ID())
	}
}

func TestRecoveryRearmsTimers(t *testing.T) {
	h := newHarness(t)
	h.start("probe", "p1", Options{})
	h.mustCall("p1", "probe.schedule", map[string]any{"ms": 300})
	h.mustCall("p1", "probe.cron", map[string]any{"job": "j", "expr": "@every 1s"})
	h.restart()
	testkit.Eventually(h.t, "the schedule and a cron tick after recovery", func() bool {
		info, err := h.rt.State("p1")
		n, _ := stateOf(t, info.State)["ticks"].(float64)
		return err == nil && n >= 2
	})
	s, _ := h.rt.lookup("p1")
	if st := s.timers.snapshot(); len(st.Crons) != 1 {
		t.Fatalf("cron job lost: %+v", st)
	}
}

func TestRecoveryRestoresHierarchy(t *testing.T) {
	h := newHarness(t)
	h.start("probe", "p", Options{})
	h.mustCall("p", "probe.spawn", map[string]any{"tag": "w"})
	// The child is in the index once its start is committed, which the
	// parent's child.started follows; it shows in State a moment before.
	testkit.Eventually(h.t, "child.started decided by the parent", func() bool { return slices.Contains(lifecycleSeen(h, "p"), TypeChildStarted) })
	if n := h.restart(); n != 2 {
		t.Fatalf("recovered %d", n)
	}
	parent, _ := h.rt.State("p")
	child, _ := h.rt.State("p/w")
	if parent.Children["w"] != "p/w" || child.Parent == nil || child.Parent.ID != "p" {
		t.Fatalf("hierarchy after recovery: %v / %+v", parent.Children, child.Parent)
	}
	// The spawn ran again on recovery only if it was not recorded; either
	// way there is one child and one started record.
	if got := h.entries("agent/p/w"); got[0] != TypeStarted || slices.Index(got[1:], TypeStarted) >= 0 {
		t.Fatalf("child stream %v", got)
	}
}

// TestReplayEqualsState: folding a stream's signals through the agent's
// logic gives the state the runtime holds.
func TestReplayEqualsState(t *testing.T) {
	h := newHarness(t)
	h.start("calculator", "calc", Options{SnapshotEvery: 3})
	for i, op := range []string{"calculator.add", "calculator.multiply", "calculator.subtract", "calculator.divide", "calculator.add"} {
		if _, err := h.call("calc", op, map[string]any{"a": float64(i + 1), "b": 2}); err != nil {
			t.Fatalf("%s: %v", op, err)
		}
	}
	want, _ := h.rt.State("calc")
	rec, err := h.rt.readStarted("agent/calc", 1)
	if err != nil {
		t.Fatal(err)
	}
	// Replay without the snapshot.
	replayed, _, err := h.rt.restoreFrom(t.Context(), rec, false)
	if err != nil {
		t.Fatal(err)
	}
	if got := replayed.info(); string(got.State) != string(want.State) || got.Version != want.Version {
		t.Fatalf("replay %s v%d, runtime %s v%d", got.State, got.Version, want.State, want.Version)
	}
}

// TestDecisionCarriesEffects: the outcome of a directive that NATS has
// confirmed rides in the next cmd record instead of an effects record of
// its own, and recovery reads it there: the emit is not sent again.
func TestDecisionCarriesEffects(t *testing.T) {
	// No effects record of its own, however slow the machine.
	h := newHarness(t, func(c *Config) { c.EffectsLinger = time.Hour })
	h.start("counter", "c1", Options{})
	h.mustCall("c1", "counter.increment", nil)
	h.waitNoted("c1", true)
	h.mustCall("c1", "counter.increment", nil)
	var carried []effectResult
	for e, err := range h.log.ReadStream("agent/c1", eventlog.ReadOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		if e.Event.Type() == TypeEffects {
			t.Fatalf("an effects record at %d, though a decision could carry the outcome", e.Seq)
		}
		var cr cmdRecord
		if e.Event.Type() == TypeCmd && json.Unmarshal(e.Event.Data(), &cr) == nil && cr.Version == 2 {
			carried = cr.Effects
		}
	}
	if len(carried) != 1 || carried[0].Version != 1 || carried[0].Index != 0 || carried[0].Outcome != OutcomeOK {
		t.Fatalf("cmd record of version 2 carries %+v", carried)
	}
	testkit.Eventually(h.t, "both emits", func() bool { return len(h.emittedOf("counter.changed")) == 2 })
	h.restart()
	testkit.Eventually(h.t, "the second emit sent again (its outcome may not be recorded)", func() bool {
		return len(h.emittedOf("counter.changed")) >= 2
	})
	h.mustCall("c1", "counter.increment", nil)
	testkit.Eventually(h.t, "the third emit", func() bool {
		for _, e := range h.emittedOf("counter.changed") {
			if string(e.Data()) == `{"count":3}` {
				return true
			}
		}
		return false
	})
	if n := countData(h.emittedOf("counter.changed"), `{"count":1}`); n != 1 {
		t.Fatalf("the first emit was sent %d times", n)
	}
}

func countData(sigs []bus.Signal, data string) int {
	n := 0
	for _, s := range sigs {
		if string(s.Data()) == data {
			n++
		}
	}
	return n
}

// TestCloseRecordsOutcomes: a clean shutdown records the outcomes it
// noted, so the next run does not send an emit again.
func TestCloseRecordsOutcomes(t *testing.T) {
	h := newHarness(t)
	h.start("counter", "c1", Options{})
	h.mustCall("c1", "counter.increment", nil)
	h.waitNoted("c1", false)
	h.restart()
	if o := h.outcomes("agent/c1"); o["1/0"] != OutcomeOK {
		t.Fatalf("outcomes after a clean close: %v", o)
	}
	h.mustCall("c1", "counter.increment", nil)
	testkit.Eventually(h.t, "the second emit", func() bool { return len(h.emittedOf("counter.changed")) >= 2 })
	if n := countData(h.emittedOf("counter.changed"), `{"count":1}`); n != 1 {
		t.Fatalf("the first emit was sent %d times", n)
	}
}

// waitNoted waits until agent id has noted one outcome not yet in the log
// (and, when confirmed is true, NATS has confirmed its emit).
func (h *harness) waitNoted(id string, confirmed bool) {
	h.t.Helper()
	s, err := h.rt.lookup(id)
	if err != nil {
		h.t.Fatal(err)
	}
	testkit.Eventually(h.t, id+"'s outcome noted", func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return len(s.effects) == 1 && (!confirmed || h.rt.flusher.confirmed(s.effects[0].gen))
	})
}

// TestQuietAgentsEffectsRecordedTogether: agents that go quiet after a
// directive get their outcomes recorded by the runtime's recorder, all of
// them in one append (one fsync), so nothing is pending and a restart
// repeats nothing. The recorder's own ticks are an hour apart; the test
// sweeps once itself, when every agent has noted its outcome.
func TestQuietAgentsEffectsRecordedTogether(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.EffectsLinger = time.Hour })
	store := &appendCounter{Store: h.log}
	h.rt.Shutdown(context.Background())
	cfg := h.cfg
	cfg.Store = store
	rt, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h.rt = rt
	t.Cleanup(func() { _ = rt.Shutdown(context.Background()) })
	ids := []string{"c1", "c2", "c3", "c4", "c5"}
	for _, id := range ids {
		h.start("counter", id, Options{})
		h.mustCall(id, "counter.increment", nil)
	}
	for _, id := range ids {
		h.waitNoted(id, true)
		// The directive loop tells the recorder it owes a moment after
		// it noted the outcome (TestQuietAgentsEffectsRecordedTogether
		// swept before the last one had, 1 run in about 50).
		s, err := rt.lookup(id)
		if err != nil {
			t.Fatal(err)
		}
		testkit.Eventually(t, id+" owing its outcome to the recorder", func() bool {
			rt.effects.mu.Lock()
			defer rt.effects.mu.Unlock()
			_, ok := rt.effects.agents[s]
			return ok
		})
	}
	rt.cfg.EffectsLinger = time.Nanosecond // every agent is quiet now
	rt.recordOwedEffects(false)
	if got := store.effectsAppends(); len(got) != 1 || got[0] != len(ids) {
		t.Fatalf("effects records went out in appends of %v records, want one of %d", got, len(ids))
	}
	for _, id := range ids {
		s, err := rt.lookup(id)
		if err != nil {
			t.Fatal(err)
		}
		s.mu.Lock()
		pending := len(s.pending)
		s.mu.Unlock()
		if pending != 0 {
			t.Fatalf("%s still has %d versions pending", id, pending)
		}
	}
	h.restart()
	// Recovery queues a directive it would repeat before it returns: once
	// every agent has run its queue, a repeated emit has shown.
	for _, id := range ids {
		h.settle(id)
	}
	if n := len(h.emittedOf("counter.changed")); n != len(ids) {
		t.Fatalf("%d counter.changed emitted across the restart, want %d", n, len(ids))
	}
}

// appendCounter is a Store that notes, for each multi-stream append
// holding effects records, how many it holds.
type appendCounter struct {
	Store
	mu      sync.Mutex
	effects []int
}

func (a *appendCounter) AppendMulti(ctx context.Context, parts []eventlog.StreamAppend) ([]eventlog.AppendResult, error) {
	n := 0
	for _, p := range parts {
		for _, e := range p.Events {
			if e.Type() == TypeEffects {
				n++
			}
		}
	}
	if n > 0 {
		a.mu.Lock()
		a.effects = append(a.effects, n)
		a.mu.Unlock()
	}
	return a.Store.AppendMulti(ctx, parts)
}

func (a *appendCounter) effectsAppends() []int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.effects)
}
