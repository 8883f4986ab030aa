package runtime

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"testing"

	"github.com/jido-bus/jido-bus/agents"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/internal/testkit"
)

// holdTasks is a "hold" task that notes the order tasks start in and
// runs until the test opens the gate of its name.
type holdTasks struct {
	mu      sync.Mutex
	started []string
	gates   map[string]chan struct{}
}

func newHoldTasks(names ...string) *holdTasks {
	ht := &holdTasks{gates: map[string]chan struct{}{}}
	for _, n := range names {
		ht.gates[n] = make(chan struct{})
	}
	return ht
}

func (ht *holdTasks) task(ctx context.Context, in agents.Instruction) (json.RawMessage, error) {
	var p struct{ Name string }
	if err := json.Unmarshal(in.Params, &p); err != nil {
		return nil, err
	}
	ht.mu.Lock()
	ht.started = append(ht.started, p.Name)
	ht.mu.Unlock()
	select {
	case <-ht.gates[p.Name]:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return json.Marshal(p.Name)
}

func (ht *holdTasks) open(name string) { close(ht.gates[name]) }

func (ht *holdTasks) startedSoFar() []string {
	ht.mu.Lock()
	defer ht.mu.Unlock()
	return slices.Clone(ht.started)
}

func withHold(ht *holdTasks, maxTasks int) func(*Config) {
	return func(cfg *Config) {
		cfg.MaxTasks = maxTasks
		cfg.Tasks["hold"] = ht.task
	}
}

// sorted returns the strings of l in order.
func sorted(l []any) []string {
	out := make([]string, 0, len(l))
	for _, v := range l {
		s, _ := v.(string)
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

func (h *harness) held(id string) []any {
	l, _ := h.state(id)["held"].([]any)
	return l
}

// TestTasksPastMaxTasksWaitInOrder: no more than Config.MaxTasks tasks run
// at once over all agents; a task past the bound waits, and the waiting
// ones start in the order they asked as running ones end. None is lost:
// every result reaches its agent.
func TestTasksPastMaxTasksWaitInOrder(t *testing.T) {
	ht := newHoldTasks("1", "2", "3", "4")
	h := newHarness(t, withHold(ht, 2))
	for _, id := range []string{"a", "b", "c"} {
		h.start("probe", id, Options{})
	}
	counts := func(running, waiting int) func() bool {
		return func() bool { c := h.rt.Counts(); return c.Tasks == running && c.TasksWaiting == waiting }
	}
	h.mustCall("a", "probe.hold", map[string]any{"name": "1"})
	h.mustCall("b", "probe.hold", map[string]any{"name": "2"})
	testkit.Eventually(t, "two tasks running", counts(2, 0))
	h.mustCall("c", "probe.hold", map[string]any{"name": "3"})
	testkit.Eventually(t, "task 3 waiting", counts(2, 1))
	h.mustCall("a", "probe.hold", map[string]any{"name": "4"})
	testkit.Eventually(t, "tasks 3 and 4 waiting", counts(2, 2))
	// Tasks 1 and 2 of two agents start in either order; 3 and 4 waited
	// one after the other.
	if got := ht.startedSoFar(); len(got) != 2 || !slices.Contains(got, "1") || !slices.Contains(got, "2") {
		t.Fatalf("started %v past the bound of 2", got)
	}
	ht.open("2")
	testkit.Eventually(t, "task 3 (the first to wait) started", func() bool { return len(ht.startedSoFar()) == 3 })
	if got := ht.startedSoFar(); got[2] != "3" {
		t.Fatalf("started %v: task 4 overtook task 3", got)
	}
	testkit.Eventually(t, "task 4 still waiting", counts(2, 1))
	ht.open("1")
	testkit.Eventually(t, "task 4 started", func() bool { return len(ht.startedSoFar()) == 4 })
	ht.open("3")
	ht.open("4")
	testkit.Eventually(t, "no task left", counts(0, 0))
	for id, want := range map[string][]any{"a": {"1", "4"}, "b": {"2"}, "c": {"3"}} {
		testkit.Eventually(t, "the results of "+id, func() bool { return slices.Equal(h.held(id), want) })
	}

	if _, err := New(Config{Store: h.log, Types: h.cfg.Types, MaxTasks: -1}); err == nil {
		t.Error("New accepted a negative MaxTasks")
	}
}

// TestAgentWithAWaitingTaskRefusesPastItsQueue: while an agent's task
// waits for a slot, the agent runs none of its later directives, so they
// fill its queue and, past max_queue_size, a new signal is refused with
// queue_overflow before anything is committed — loudly, to the caller —
// rather than the runtime holding ever more work. Once slots free up,
// everything committed runs: the waiting task and the queued emits.
func TestAgentWithAWaitingTaskRefusesPastItsQueue(t *testing.T) {
	ht := newHoldTasks("1", "2")
	h := newHarness(t, withHold(ht, 1))
	h.start("probe", "a", Options{MaxQueueSize: 2})
	h.mustCall("a", "probe.hold", map[string]any{"name": "1"})
	h.mustCall("a", "probe.hold", map[string]any{"name": "2"})
	testkit.Eventually(t, "task 2 waiting", func() bool { return h.rt.Counts().TasksWaiting == 1 })
	h.mustCall("a", "probe.emit", map[string]any{"n": 1})
	h.mustCall("a", "probe.emit", map[string]any{"n": 2})
	_, err := h.call("a", "probe.emit", map[string]any{"n": 3})
	if bus.ErrorType(err) != bus.ReasonQueueOverflow {
		t.Fatalf("a signal past a full queue behind a waiting task: %v, want queue_overflow", err)
	}
	version := h.mustState("a").Version

	ht.open("1")
	ht.open("2")
	// The two tasks end in either order, and so do their results.
	testkit.Eventually(t, "both results", func() bool { return slices.Equal(sorted(h.held("a")), []string{"1", "2"}) })
	testkit.Eventually(t, "both queued emits", func() bool { return len(h.emittedOf("probe.emitted")) == 2 })
	if got := ht.startedSoFar(); !slices.Equal(got, []string{"1", "2"}) {
		t.Fatalf("started %v", got)
	}
	if v := h.mustState("a").Version; v != version+2 {
		t.Fatalf("version %d after the two results, want %d: the refused signal was committed", v, version+2)
	}
}

// TestTaskWaitingAtShutdownRunsAfterRestart: a task still waiting for a
// slot when the runtime shuts down gives up its wait (Shutdown does not
// hang on it) and, awaited in the log, runs after the restart; its result
// is committed once.
func TestTaskWaitingAtShutdownRunsAfterRestart(t *testing.T) {
	ht := newHoldTasks("1", "2")
	h := newHarness(t, withHold(ht, 1))
	h.start("probe", "a", Options{})
	h.mustCall("a", "probe.hold", map[string]any{"name": "1"})
	h.mustCall("a", "probe.hold", map[string]any{"name": "2"})
	testkit.Eventually(t, "task 2 waiting", func() bool { return h.rt.Counts().TasksWaiting == 1 })
	h.restart()
	ht.open("1")
	ht.open("2")
	testkit.Eventually(t, "both results after the restart", func() bool {
		held := h.held("a")
		return slices.Contains(held, "1") && slices.Contains(held, "2")
	})
	h.settle("a")
	if held := h.held("a"); len(held) != 2 {
		t.Fatalf("results %v, want each once", held)
	}
}

func (h *harness) mustState(id string) Info {
	h.t.Helper()
	info, err := h.rt.State(id)
	if err != nil {
		h.t.Fatal(err)
	}
	return info
}

// TestTaskResultPassesAFullQueue: a task's result that came back to a
// full queue was refused and offered again every second, so while the
// agent stayed busy it never got in and then came late and out of order;
// it is admitted past the bound, as an executor's result is.
func TestTaskResultPassesAFullQueue(t *testing.T) {
	ht := newHoldTasks("1")
	var h *harness // the executor runs once h is set
	h = newHarness(t, withHold(ht, 0), func(cfg *Config) {
		cfg.Executors["test_block"] = ExecFunc(func(ctx context.Context, d agents.Directive, _ *ExecContext) (ExecResult, error) {
			select {
			case <-h.gate(d.(block).Name):
			case <-ctx.Done():
				return ExecResult{}, ctx.Err()
			}
			return ExecResult{}, nil
		})
	})
	h.start("probe", "p1", Options{MaxQueueSize: 2})
	h.mustCall("p1", "probe.hold", map[string]any{"name": "1"})
	testkit.Eventually(t, "task 1 running", func() bool { return h.rt.Counts().Tasks == 1 })
	h.mustCall("p1", "probe.block", map[string]any{"name": "first"})
	testkit.Eventually(t, "the first block running", func() bool { info, _ := h.rt.State("p1"); return info.QueueLength == 0 })
	for range 2 {
		h.mustCall("p1", "probe.block", map[string]any{"name": "rest"})
	}
	if err := h.rt.Cast("p1", signal(t, "probe.tick", nil)); bus.ErrorType(err) != bus.ReasonQueueOverflow {
		t.Fatalf("a cast from outside on a full queue: %v, want queue_overflow", err)
	}
	ht.open("1")
	// Decided while the queue is still full: the old delivery was refused
	// and offered again every second, refused each time until the agent
	// caught up.
	testkit.Eventually(t, "the task's result decided past the full queue", func() bool { return slices.Equal(h.held("p1"), []any{"1"}) })
	if err := h.rt.Cast("p1", signal(t, "probe.tick", nil)); bus.ErrorType(err) != bus.ReasonQueueOverflow {
		t.Fatalf("the queue is no longer full (%v): the result was not tested past the bound", err)
	}
	h.open("first")
	h.open("rest")
}
