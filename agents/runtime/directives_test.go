package runtime

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jido-bus/jido-bus/agents"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/dispatch"
	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/jido-bus/jido-bus/internal/testkit"
)

func TestEmitUsesDerivedIDs(t *testing.T) {
	h := newHarness(t)
	h.start("probe", "p1", Options{})
	sig := signal(t, "probe.emit", map[string]any{"n": 7})
	if _, err := h.rt.Call(context.Background(), "p1", sig); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(h.t, "the emit", func() bool { return len(h.emittedOf("probe.emitted")) == 1 })
	e := h.emittedOf("probe.emitted")[0]
	if e.ID() != agents.DeriveID(agents.OriginKey(agents.OriginOf(sig), "p1"), 0) || e.Source() != agents.SourceOf("p1") || string(e.Data()) != `{"n":7}` {
		t.Fatalf("emitted %v", e)
	}
	if e.Extensions()[bus.ExtCausationID] != sig.ID() {
		t.Fatalf("causationid = %v", e.Extensions()[bus.ExtCausationID])
	}
}

func TestScheduleDeliversTheSignalLater(t *testing.T) {
	h := newHarness(t)
	h.start("probe", "p1", Options{})
	h.mustCall("p1", "probe.schedule", map[string]any{"ms": 20})
	testkit.Eventually(h.t, "the scheduled tick", func() bool { return h.state("p1")["ticks"] == 1.0 })
	// The promise is kept: nothing is awaited any more.
	s, _ := h.rt.lookup("p1")
	if st := s.timers.snapshot(); len(st.Awaiting) != 0 {
		t.Fatalf("still awaiting %v", st.Awaiting)
	}
}

// TestScheduleCancelWithdrawsTheSchedule: a cancelled schedule is no
// longer awaited nor armed, and a restart does not arm it again.
func TestScheduleCancelWithdrawsTheSchedule(t *testing.T) {
	h := newHarness(t)
	h.start("probe", "p1", Options{})
	sig := signal(t, "probe.schedule", map[string]any{"ms": 3_600_000})
	if _, err := h.rt.Call(context.Background(), "p1", sig); err != nil {
		t.Fatal(err)
	}
	id := agents.DeriveID(agents.OriginKey(agents.OriginOf(sig), "p1"), 0)
	pending := func() (awaited, armed int) {
		s, err := h.rt.lookup("p1")
		if err != nil {
			t.Fatal(err)
		}
		s.timers.mu.Lock()
		defer s.timers.mu.Unlock()
		return len(s.timers.state.Awaiting), len(s.timers.armed)
	}
	// The clock is armed by the executor, after the commit.
	testkit.Eventually(h.t, "the schedule armed", func() bool { awaited, armed := pending(); return awaited == 1 && armed == 1 })
	h.mustCall("p1", "probe.schedule_cancel", map[string]any{"name": id})
	if awaited, armed := pending(); awaited != 0 || armed != 0 {
		t.Fatalf("after schedule_cancel: %d awaited, %d armed, want none", awaited, armed)
	}
	h.restart()
	if awaited, armed := pending(); awaited != 0 || armed != 0 {
		t.Fatalf("after a restart: %d awaited, %d armed, want none", awaited, armed)
	}
}

func TestCronAndCronCancel(t *testing.T) {
	h := newHarness(t)
	h.start("probe", "p1", Options{})
	h.mustCall("p1", "probe.cron", map[string]any{"job": "j1", "expr": "@every 1s"})
	testkit.Eventually(h.t, "two cron ticks", func() bool { return h.state("p1")["ticks"] == 2.0 })
	ticks := h.entries("agent/p1")
	if !slices.Contains(ticks, TypeCronTick) {
		t.Fatalf("no %s in the log: %v", TypeCronTick, ticks)
	}
	h.mustCall("p1", "probe.cron_cancel", map[string]any{"job": "j1"})
	s, _ := h.rt.lookup("p1")
	testkit.Eventually(h.t, "the job gone", func() bool { return len(s.timers.snapshot().Crons) == 0 })
	// A bad expression is an executor failure, recorded, not a crash.
	h.mustCall("p1", "probe.cron", map[string]any{"job": "bad", "expr": "not cron"})
	testkit.Eventually(h.t, "the failure counted", func() bool { info, _ := h.rt.State("p1"); return info.ErrorCount == 1 })
	if info, _ := h.rt.State("p1"); info.Status != StatusRunning {
		t.Fatalf("status %s", info.Status)
	}
}

func TestRunInstructionFeedsTheResultBack(t *testing.T) {
	h := newHarness(t)
	h.start("probe", "p1", Options{})
	h.mustCall("p1", "probe.run", map[string]any{"n": 21})
	testkit.Eventually(h.t, "the task result", func() bool { return h.state("p1")["result"] == 42.0 })
	if !slices.Contains(h.entries("agent/p1"), TypeInstructionResult) {
		t.Fatal("the result signal was not committed")
	}
}

func TestRunInstructionWithoutTask(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.Tasks = nil })
	h.start("probe", "p1", Options{})
	h.mustCall("p1", "probe.run", map[string]any{"n": 1})
	testkit.Eventually(h.t, "the error result", func() bool {
		e, _ := h.state("p1")["result_error"].(map[string]any)
		return e["type"] == bus.ReasonNotFound
	})
}

func TestStopDirectiveDropsWhatFollows(t *testing.T) {
	h := newHarness(t)
	h.start("probe", "p1", Options{})
	h.mustCall("p1", "probe.block", map[string]any{"name": "g"})
	h.mustCall("p1", "probe.stop", map[string]any{"reason": "done"})
	h.mustCall("p1", "probe.emit", nil) // queued behind the stop
	h.open("g")
	testkit.Eventually(h.t, "the stop", func() bool { _, err := h.rt.State("p1"); return err != nil })
	got := h.entries("agent/p1")
	if got[len(got)-1] != TypeStopped {
		t.Fatalf("stream does not end with %s: %v", TypeStopped, got)
	}
	if n := len(h.emittedOf("probe.emitted")); n != 0 {
		t.Fatalf("a dropped emit ran %d times", n)
	}
	var dropped int
	for e, err := range h.log.ReadStream("agent/p1", eventlog.ReadOptions{Types: TypeEffects}) {
		if err != nil {
			t.Fatal(err)
		}
		var rec effectsRecord
		_ = json.Unmarshal(e.Event.Data(), &rec)
		for _, r := range rec.Results {
			if r.Outcome == OutcomeDropped {
				dropped++
			}
		}
	}
	if dropped != 1 {
		t.Fatalf("%d dropped directives recorded, want 1", dropped)
	}
	if idx := h.entries(IndexStream); !slices.Equal(idx, []string{TypeRegistered, TypeDeregistered}) {
		t.Fatalf("index %v", idx)
	}
	if _, err := h.call("p1", "probe.emit", nil); bus.ErrorType(err) != bus.ReasonNotFound {
		t.Fatalf("a stopped agent answered: %v", err)
	}
	if h.restart() != 0 {
		t.Fatal("a stopped agent came back")
	}
}

func TestUnknownDirectiveIsRecordedNotFatal(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.Executors = nil })
	h.start("probe", "p1", Options{})
	h.mustCall("p1", "probe.boom", nil) // no executor without the test's
	testkit.Eventually(h.t, "the outcome", func() bool {
		for e := range h.log.ReadStream("agent/p1", eventlog.ReadOptions{Types: TypeEffects}) {
			if strings.Contains(string(e.Event.Data()), `"outcome":"unknown"`) {
				return true
			}
		}
		return false
	})
	if r := h.mustCall("p1", "probe.tick", nil); stateOf(t, r.State)["ticks"] != 1.0 {
		t.Fatalf("agent stuck: %s", r.State)
	}
}

func TestErrorPolicies(t *testing.T) {
	cases := []struct {
		name      string
		policy    ErrorPolicy
		failures  int
		stopped   bool
		emittedTo bool
	}{
		{"log_only", ErrorPolicy{}, 3, false, false},
		{"stop_on_error", ErrorPolicy{Kind: PolicyStopOnError}, 1, true, false},
		{"max_errors", ErrorPolicy{Kind: PolicyMaxErrors, MaxErrors: 2}, 2, true, false},
		{"emit_signal", ErrorPolicy{Kind: PolicyEmitSignal, Dispatch: &dispatch.Config{Kind: dispatch.KindNoop}}, 2, false, true},
		{"func", ErrorPolicy{Kind: PolicyFunc, Func: "second-strike"}, 2, true, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var seen []int
			h := newHarness(t, func(cfg *Config) {
				cfg.ErrorPolicies = map[string]ErrorPolicyFunc{"second-strike": func(_ context.Context, e ErrorEvent) (bool, string) {
					seen = append(seen, e.ErrorCount)
					return e.ErrorCount >= 2, "two strikes"
				}}
			})
			h.start("probe", "p1", Options{ErrorPolicy: c.policy})
			for i := range c.failures {
				if _, err := h.call("p1", "probe.fail", map[string]any{"reason": "x"}); bus.ErrorType(err) != "probe_failed" {
					t.Fatalf("failure %d: %v", i, err)
				}
			}
			if c.stopped {
				testkit.Eventually(h.t, "the stop", func() bool { _, err := h.rt.State("p1"); return err != nil })
				if got := h.entries("agent/p1"); got[len(got)-1] != TypeStopped {
					t.Fatalf("stream %v", got)
				}
			} else {
				testkit.Eventually(h.t, "the errors handled", func() bool { info, _ := h.rt.State("p1"); return info.ErrorCount == c.failures })
				if info, _ := h.rt.State("p1"); info.Status != StatusRunning {
					t.Fatalf("status %s", info.Status)
				}
			}
			testkit.Eventually(h.t, "jido.agent.error published", func() bool { return len(h.emittedOf(TypeError)) >= c.failures })
			if c.name == "func" && !slices.Equal(seen, []int{1, 2}) {
				t.Fatalf("policy func saw %v", seen)
			}
		})
	}
}

func TestErrorPolicyJSON(t *testing.T) {
	for _, in := range []string{`"log_only"`, `"stop_on_error"`, `{"max_errors":3}`, `{"emit_signal":"log"}`, `{"func":"f"}`} {
		var p ErrorPolicy
		if err := json.Unmarshal([]byte(in), &p); err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		out, err := json.Marshal(p)
		if err != nil || string(out) != in {
			t.Fatalf("%s round-trips to %s (%v)", in, out, err)
		}
	}
	for _, bad := range []string{`{"max_errors":1,"func":"f"}`, `{"explode":1}`, `[1]`, `{"emit_signal":{"kind":"webhook"}}`} {
		var p ErrorPolicy
		if err := json.Unmarshal([]byte(bad), &p); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

// TestCallsDoNotBlockReads: while a directive blocks the agent's queue,
// State answers, and signals keep being decided in order.
func TestCallsDoNotBlockReads(t *testing.T) {
	h := newHarness(t)
	h.start("probe", "p1", Options{})
	h.mustCall("p1", "probe.block", map[string]any{"name": "slow"})
	for range 3 {
		if err := h.rt.Cast("p1", signal(t, "probe.tick", nil)); err != nil {
			t.Fatal(err)
		}
	}
	testkit.Eventually(h.t, "the casts decided behind the blocked directive", func() bool { return h.state("p1")["ticks"] == 3.0 })
	info, err := h.rt.State("p1")
	if err != nil || info.Version != 4 || info.QueueLength != 0 {
		t.Fatalf("state while blocked: %+v %v", info, err)
	}
	h.open("slow")
}

func TestQueueOverflowRefusesBeforeCommit(t *testing.T) {
	h := newHarness(t)
	h.start("probe", "p1", Options{MaxQueueSize: 3})
	h.mustCall("p1", "probe.block", map[string]any{"name": "g"})
	// The executing directive leaves the queue once the queue loop takes it.
	testkit.Eventually(h.t, "the first block running", func() bool { info, _ := h.rt.State("p1"); return info.QueueLength == 0 })
	h.mustCall("p1", "probe.block", map[string]any{"name": "g"})
	h.mustCall("p1", "probe.block", map[string]any{"name": "g"})
	h.mustCall("p1", "probe.block", map[string]any{"name": "g"})
	before := len(h.entries("agent/p1"))
	_, err := h.call("p1", "probe.tick", nil)
	if bus.ErrorType(err) != bus.ReasonQueueOverflow {
		info, _ := h.rt.State("p1")
		t.Fatalf("call on a full queue: %v (%+v)", err, info)
	}
	if err := h.rt.Cast("p1", signal(t, "probe.tick", nil)); bus.ErrorType(err) != bus.ReasonQueueOverflow {
		t.Fatalf("cast on a full queue: %v", err)
	}
	if after := len(h.entries("agent/p1")); after != before {
		t.Fatalf("a refused signal was committed: %d → %d entries", before, after)
	}
	h.open("g")
	testkit.Eventually(h.t, "the queue drained", func() bool { info, _ := h.rt.State("p1"); return info.QueueLength == 0 })
	h.mustCall("p1", "probe.tick", nil)
}

func TestAwait(t *testing.T) {
	h := newHarness(t)
	h.start("probe", "p1", Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	_, err := h.rt.Await(ctx, "p1")
	cancel()
	if bus.ErrorType(err) != ReasonTimeout || !strings.Contains(err.Error(), "has not completed") {
		t.Fatalf("await before completion: %v", err)
	}
	done := make(chan Info, 1)
	go func() {
		info, _ := h.rt.Await(context.Background(), "p1")
		done <- info
	}()
	h.mustCall("p1", "probe.complete", nil)
	if info := <-done; info.stateStatus() != "completed" {
		t.Fatalf("await returned %+v", info)
	}
}

func TestBroadcast(t *testing.T) {
	h := newHarness(t)
	h.start("counter", "a", Options{})
	h.start("counter", "b", Options{})
	h.start("probe", "p", Options{})
	n, err := h.rt.Broadcast(signal(t, "counter.increment", map[string]int{"by": 5}))
	if err != nil || n != 2 {
		t.Fatalf("broadcast reached %d: %v", n, err)
	}
	testkit.Eventually(h.t, "both counters", func() bool { return h.state("a")["count"] == 5.0 && h.state("b")["count"] == 5.0 })
	if h.state("p")["count"] != nil {
		t.Fatal("the probe got a counter signal")
	}
}

// TestPanickingErrorPolicyCarriesOn: a policy function that panics is
// logged and taken as "carry on": it cannot take its agent down, which
// goes on counting errors and answering.
func TestPanickingErrorPolicyCarriesOn(t *testing.T) {
	var calls atomic.Int32 // the policy runs on the agent's task goroutine
	h := newHarness(t, func(cfg *Config) {
		cfg.ErrorPolicies = map[string]ErrorPolicyFunc{"broken": func(context.Context, ErrorEvent) (bool, string) {
			calls.Add(1)
			panic("policy bug")
		}}
	})
	h.start("probe", "p1", Options{ErrorPolicy: ErrorPolicy{Kind: PolicyFunc, Func: "broken"}})
	for i := range 2 {
		if _, err := h.call("p1", "probe.fail", map[string]any{"reason": "x"}); bus.ErrorType(err) != "probe_failed" {
			t.Fatalf("failure %d: %v", i, err)
		}
	}
	testkit.Eventually(h.t, "both errors handled", func() bool {
		info, _ := h.rt.State("p1")
		return info.ErrorCount == 2 && calls.Load() == 2
	})
	if info, _ := h.rt.State("p1"); info.Status != StatusRunning || info.Restarts != 0 {
		t.Fatalf("after the policy panicked: status %s, restarts %d; want running, 0", info.Status, info.Restarts)
	}
	if r := h.mustCall("p1", "probe.tick", nil); stateOf(t, r.State)["ticks"] != 1.0 {
		t.Fatalf("agent stuck: %s", r.State)
	}
}
