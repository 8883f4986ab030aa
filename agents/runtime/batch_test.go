package runtime

import (
	"context"
	"strconv"
	"sync"
	"testing"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/jido-bus/jido-bus/internal/testkit"
)

// gatedStore holds back the appends to one stream until its gate opens,
// so that signals queue up behind the one being committed, and records
// how many events each append to that stream carried.
type gatedStore struct {
	Store
	stream string
	gate   chan struct{}

	mu    sync.Mutex
	sizes []int
}

func (g *gatedStore) wait(stream string, n int) {
	if stream != g.stream {
		return
	}
	<-g.gate
	g.mu.Lock()
	g.sizes = append(g.sizes, n)
	g.mu.Unlock()
}

func (g *gatedStore) Append(ctx context.Context, stream string, expected eventlog.ExpectedVersion, events ...bus.Signal) (eventlog.AppendResult, error) {
	g.wait(stream, len(events))
	return g.Store.Append(ctx, stream, expected, events...)
}

func (g *gatedStore) AppendMulti(ctx context.Context, parts []eventlog.StreamAppend) ([]eventlog.AppendResult, error) {
	for _, p := range parts {
		g.wait(p.Stream, len(p.Events))
	}
	return g.Store.AppendMulti(ctx, parts)
}

func (g *gatedStore) appendSizes() []int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]int(nil), g.sizes...)
}

// gate makes the appends to agent id's stream wait for the returned
// store's gate, from now on.
func (h *harness) gateAppends(id string) *gatedStore {
	g := &gatedStore{Store: h.log, stream: "agent/" + id, gate: make(chan struct{})}
	h.rt.cfg.Store = g // before the agent gets any signal: nothing appends concurrently
	return g
}

// queueBehindCommit casts first, waits until its commit is held at the
// gate (in the store, past the agent's own checks: a shutdown that halts
// the agent then no longer refuses it), then casts the rest, so that they
// wait in the agent's inbox.
func (h *harness) queueBehindCommit(id string, first bus.Signal, rest ...bus.Signal) *server {
	h.t.Helper()
	s, err := h.rt.lookup(id)
	if err != nil {
		h.t.Fatal(err)
	}
	if err := h.rt.Cast(id, first); err != nil {
		h.t.Fatal(err)
	}
	testkit.Eventually(h.t, "the first signal's commit held at the gate", func() bool {
		return testkit.BlockedIn("agents/runtime.(*gatedStore).wait")
	})
	for _, sig := range rest {
		if err := h.rt.Cast(id, sig); err != nil {
			h.t.Fatal(err)
		}
	}
	return s
}

// TestQueuedSignalsCommitTogether: signals waiting in an agent's inbox
// are decided in order, each on the state the one before left, and
// committed in one append; the log replays to the same state, decision
// for decision.
func TestQueuedSignalsCommitTogether(t *testing.T) {
	h := newHarness(t)
	h.start("counter", "c1", Options{})
	g := h.gateAppends("c1")
	var rest []bus.Signal
	for range 9 {
		rest = append(rest, signal(t, "counter.increment", map[string]int{"by": 2}))
	}
	h.queueBehindCommit("c1", signal(t, "counter.increment", map[string]int{"by": 1}), rest...)
	close(g.gate)
	testkit.Eventually(h.t, "all ten decided", func() bool { info, _ := h.rt.State("c1"); return info.Version == 10 })
	if got := h.state("c1")["count"]; got != 19.0 {
		t.Fatalf("count = %v, want 19", got)
	}
	// The first alone, then the nine that queued behind it in one append
	// (each signal with its cmd record).
	sizes := g.appendSizes()
	if len(sizes) < 2 || sizes[0] != 2 || sizes[1] != 18 {
		t.Fatalf("appends to agent/c1 carried %v events, want 2 then 18", sizes)
	}
	res, err := Replay(h.log.ReadStream("agent/c1", eventlog.ReadOptions{}), h.cfg.Types, h.cfg.Directives, ReplayOptions{Verify: true})
	if err != nil || res.Divergence != nil || res.Version != 10 || stateOf(t, res.State)["count"] != 19.0 {
		t.Fatalf("replay: %+v %v", res, err)
	}
	// Every emit of the batch went out, in order.
	testkit.Eventually(h.t, "ten emits", func() bool { return len(h.emittedOf("counter.changed")) == 10 })
	for i, e := range h.emittedOf("counter.changed") {
		if want := []int{1, 3, 5, 7, 9, 11, 13, 15, 17, 19}[i]; string(e.Data()) != `{"count":`+strconv.Itoa(want)+`}` {
			t.Fatalf("emit %d: %s", i, e.Data())
		}
	}
}

// TestBatchWithADuplicateFallsBack: a signal already in the log among the
// queued ones is answered as a duplicate and decided nothing; the others
// are committed on the right states.
func TestBatchWithADuplicateFallsBack(t *testing.T) {
	h := newHarness(t)
	h.start("counter", "c1", Options{})
	again := signal(t, "counter.increment", map[string]int{"by": 100})
	h.mustCall("c1", "counter.increment", map[string]int{"by": 1})
	if _, err := h.rt.Call(context.Background(), "c1", again); err != nil {
		t.Fatal(err)
	}
	g := h.gateAppends("c1")
	s := h.queueBehindCommit("c1", signal(t, "counter.increment", map[string]int{"by": 10}), signal(t, "counter.increment", map[string]int{"by": 20}))
	type answer struct {
		r   Reply
		err error
	}
	dup := make(chan answer, 1)
	go func() {
		r, err := h.rt.Call(context.Background(), "c1", again)
		dup <- answer{r, err}
	}()
	testkit.Eventually(h.t, "the duplicate queued", func() bool { s.mu.Lock(); defer s.mu.Unlock(); return len(s.inbox) == 2 })
	if err := h.rt.Cast("c1", signal(t, "counter.increment", map[string]int{"by": 30})); err != nil {
		t.Fatal(err)
	}
	close(g.gate)
	a := <-dup
	if a.err != nil || !a.r.Duplicate {
		t.Fatalf("the duplicate's reply: %+v %v", a.r, a.err)
	}
	testkit.Eventually(h.t, "the three new ones decided", func() bool { info, _ := h.rt.State("c1"); return info.Version == 5 })
	if got := h.state("c1")["count"]; got != 161.0 {
		t.Fatalf("count = %v, want 1+100+10+20+30 = 161", got)
	}
	res, err := Replay(h.log.ReadStream("agent/c1", eventlog.ReadOptions{}), h.cfg.Types, h.cfg.Directives, ReplayOptions{Verify: true})
	if err != nil || res.Divergence != nil || res.Version != 5 {
		t.Fatalf("replay: %+v %v", res, err)
	}
}
