package runtime

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/jido-bus/jido-bus/internal/testkit"
)

// twoPartitions puts agents whose root id starts with "a" in partition 0
// and every other in partition 1, each listed in runtime/agents/<p>.
var twoPartitions = &Partitions{
	Of: func(stream string) int {
		if n, ok := strings.CutPrefix(stream, "runtime/agents/"); ok {
			p, _ := strconv.Atoi(n)
			return p
		}
		_, id, _ := strings.Cut(stream, "/")
		if strings.HasPrefix(id, "a") {
			return 0
		}
		return 1
	},
	Index: func(p int) string { return "runtime/agents/" + strconv.Itoa(p) },
}

// secondNode is another runtime of the harness's agent types on the same
// log: a second node of a cluster.
func (h *harness) secondNode() *Runtime {
	h.t.Helper()
	cfg := h.cfg
	cfg.Store = h.log
	rt, err := New(cfg)
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { _ = rt.Shutdown(context.Background()) })
	return rt
}

func clustered(c *Config) { c.Partitions = twoPartitions }

func acquire(t *testing.T, rt *Runtime, p int) int {
	t.Helper()
	n, err := rt.Acquire(context.Background(), p)
	if err != nil {
		t.Fatalf("acquire %d: %v", p, err)
	}
	return n
}

func TestPartitionNotHeldIsRefusedUnavailable(t *testing.T) {
	h := newHarness(t, clustered)
	if n, err := h.rt.Recover(context.Background()); n != 0 || err != nil {
		t.Fatalf("Recover in cluster mode = %d, %v; want 0, nil", n, err)
	}
	acquire(t, h.rt, 0)
	h.start("counter", "a1", Options{})
	_, err := h.rt.Start(context.Background(), StartRequest{Type: "counter", ID: "b1"})
	if bus.ErrorType(err) != bus.ReasonUnavailable {
		t.Fatalf("start in a partition not held: %v, want unavailable", err)
	}
	if _, err := h.call("b1", "counter.increment", map[string]int{"by": 1}); bus.ErrorType(err) != bus.ReasonUnavailable {
		t.Fatalf("call to a partition not held: %v, want unavailable", err)
	}
	if _, err := h.call("a2", "counter.increment", map[string]int{"by": 1}); bus.ErrorType(err) != bus.ReasonNotFound {
		t.Fatalf("call to an unknown agent of a held partition: %v, want not_found", err)
	}
	// The start went to the partition's own index, not the single node's.
	if got := h.entries("runtime/agents/0"); len(got) != 1 {
		t.Fatalf("runtime/agents/0 = %v, want one registration", got)
	}
	if _, err := h.log.Stream(IndexStream); !errors.Is(err, eventlog.ErrNotFound) {
		t.Fatalf("%s: %v, want not found in cluster mode", IndexStream, err)
	}
}

func TestPartitionMovesWithItsAgents(t *testing.T) {
	h := newHarness(t, clustered)
	acquire(t, h.rt, 0)
	acquire(t, h.rt, 1)
	h.start("counter", "a1", Options{})
	h.start("counter", "b1", Options{})
	h.mustCall("a1", "counter.increment", map[string]int{"by": 1})
	h.mustCall("b1", "counter.increment", map[string]int{"by": 5})

	if err := h.rt.Release(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	if got := h.rt.Held(); len(got) != 1 || got[0] != 0 {
		t.Fatalf("Held after releasing 1 = %v, want [0]", got)
	}
	if _, err := h.call("b1", "counter.increment", map[string]int{"by": 1}); bus.ErrorType(err) != bus.ReasonUnavailable {
		t.Fatalf("call after its partition was released: %v, want unavailable", err)
	}
	h.mustCall("a1", "counter.increment", map[string]int{"by": 1}) // partition 0 stays

	other := h.secondNode()
	if n := acquire(t, other, 1); n != 1 {
		t.Fatalf("the new owner brought back %d agents, want 1", n)
	}
	ctx := context.Background()
	r, err := other.Call(ctx, "b1", signal(t, "counter.increment", map[string]int{"by": 2}))
	if err != nil {
		t.Fatal(err)
	}
	if got := stateOf(t, r.State)["count"]; got != float64(7) || r.Version != 2 {
		t.Fatalf("b1 on its new owner: count %v version %d, want 7 and 2", got, r.Version)
	}
	if _, err := other.Call(ctx, "a1", signal(t, "counter.increment", map[string]int{"by": 1})); bus.ErrorType(err) != bus.ReasonUnavailable {
		t.Fatalf("the new owner took a1 of partition 0: %v", err)
	}
}

// A node that lost a partition without knowing it (paused while another
// took the partition over) has its next commit refused by the log; the
// signal is refused unavailable, nothing of it is kept, and the agent is
// reloaded from the log as it is now.
func TestStaleOwnerCommitIsFenced(t *testing.T) {
	h := newHarness(t, clustered)
	acquire(t, h.rt, 0)
	h.start("counter", "a1", Options{})
	h.mustCall("a1", "counter.increment", map[string]int{"by": 1})

	other := h.secondNode()
	acquire(t, other, 0) // the stale owner was never told
	ctx := context.Background()
	if _, err := other.Call(ctx, "a1", signal(t, "counter.increment", map[string]int{"by": 10})); err != nil {
		t.Fatal(err)
	}
	before := len(h.entries("agent/a1"))

	stale := signal(t, "counter.increment", map[string]int{"by": 100})
	_, err := h.rt.Call(ctx, "a1", stale)
	if bus.ErrorType(err) != bus.ReasonUnavailable {
		t.Fatalf("the stale owner's commit: %v, want unavailable", err)
	}
	if got := h.entries("agent/a1"); len(got) != before {
		t.Fatalf("the stale owner's refused commit left entries: %d before, %d after", before, len(got))
	}
	for e, err := range h.log.ReadStream("agent/a1", eventlog.ReadOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		if e.Event.ID() == stale.ID() {
			t.Fatalf("the refused signal %s is in the log at %d", stale.ID(), e.Seq)
		}
	}
	// Still holding the partition, the stale node reloads the agent from
	// the log and decides on top of the other node's commit.
	r, err := h.rt.Call(ctx, "a1", signal(t, "counter.increment", map[string]int{"by": 100}))
	if err != nil {
		t.Fatal(err)
	}
	if got := stateOf(t, r.State)["count"]; got != float64(111) {
		t.Fatalf("after reloading: count %v, want 111", got)
	}
}

func TestMergeListsKeepsOneRuntimesOrder(t *testing.T) {
	a := []Info{{ID: "a", Status: StatusRunning, QueueLength: 1}, {ID: "c", Status: StatusPassive}}
	b := []Info{{ID: "b", Status: StatusRunning, QueueLength: 5}, {ID: "d", Status: StatusRunning}}
	ids := func(l []Info) string {
		var s []string
		for _, i := range l {
			s = append(s, i.ID)
		}
		return strings.Join(s, ",")
	}
	if got := ids(MergeLists(ListOptions{}, a, b)); got != "a,b,c,d" {
		t.Errorf("by id: %s", got)
	}
	if got := ids(MergeLists(ListOptions{Limit: 3}, a, b)); got != "a,b,c" {
		t.Errorf("by id, limit 3: %s", got)
	}
	if got := ids(MergeLists(ListOptions{ByQueue: true}, a, b)); got != "b,a,d,c" {
		t.Errorf("by queue: %s (the passive agent comes last)", got)
	}
}

// A partition handed over while its agents still commit what they had
// accepted leaves the directives of those commits pending in the log: the
// old owner does not run them, the new one does, once each.
func TestHandOverLeavesQueuedDirectivesToTheNextOwner(t *testing.T) {
	h := newHarness(t, clustered)
	acquire(t, h.rt, 0)
	h.start("probe", "a1", Options{})
	g := h.gateAppends("a1")
	h.queueBehindCommit("a1", signal(t, "probe.emit", map[string]any{"n": 1}),
		signal(t, "probe.emit", map[string]any{"n": 2}), signal(t, "probe.emit", map[string]any{"n": 3}))
	released := make(chan error, 1)
	go func() { released <- h.rt.Release(context.Background(), 0) }()
	testkit.Eventually(t, "the partition no longer served", func() bool { return !h.rt.Serves(0) })
	close(g.gate) // the accepted signals commit during the hand-over
	if err := <-released; err != nil {
		t.Fatal(err)
	}
	if got := h.emittedOf("probe.emitted"); len(got) != 0 {
		t.Fatalf("the old owner ran %d directives of commits made while handing over", len(got))
	}
	other := h.secondNode()
	acquire(t, other, 0)
	testkit.Eventually(t, "the new owner ran the three pending emits", func() bool { return len(h.emittedOf("probe.emitted")) == 3 })
	if info, err := other.State("a1"); err != nil || info.Version != 3 {
		t.Fatalf("a1 on the new owner: %+v, %v; want the three signals committed", info, err)
	}
}

// A node that lost a partition's lease releases it with an ended
// context: the signals its agents had accepted and not yet decided are
// refused unavailable (their senders retry where the partition is now),
// none is committed; only the decision already in flight ends.
func TestReleaseAfterALostLeaseCommitsNothingMore(t *testing.T) {
	h := newHarness(t, clustered)
	acquire(t, h.rt, 0)
	h.start("counter", "a1", Options{})
	g := h.gateAppends("a1")
	h.queueBehindCommit("a1", signal(t, "counter.increment", map[string]int{"by": 1}))
	answers := make(chan error, 2)
	for range 2 {
		if err := h.rt.Deliver("a1", signal(t, "counter.increment", map[string]int{"by": 10}), func(_ Reply, err error) { answers <- err }); err != nil {
			t.Fatal(err)
		}
	}
	lost, cancel := context.WithCancel(context.Background())
	cancel()
	released := make(chan error, 1)
	go func() { released <- h.rt.Release(lost, 0) }()
	for range 2 {
		if err := <-answers; bus.ErrorType(err) != bus.ReasonUnavailable {
			t.Fatalf("a signal accepted before the lease was lost: %v, want unavailable", err)
		}
	}
	close(g.gate) // the decision in flight ends
	if err := <-released; err != nil {
		t.Fatal(err)
	}
	var increments int
	for e, err := range h.log.ReadStream("agent/a1", eventlog.ReadOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		if e.Event.Type() == "counter.increment" {
			increments++
		}
	}
	if increments != 1 {
		t.Fatalf("%d increments in the log, want only the one in flight", increments)
	}
}
