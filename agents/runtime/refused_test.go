package runtime

import (
	"strings"
	"sync"
	"testing"

	"github.com/jido-bus/jido-bus/agents"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/jido-bus/jido-bus/internal/testkit"
)

// refusals records what the runtime refuses after it accepted it
// (Config.OnRefused).
type refusals struct {
	mu   sync.Mutex
	list []refusal
}

type refusal struct {
	agent, signal, reason string
}

func (r *refusals) note(agent string, sig *bus.Signal, err error) {
	r.mu.Lock()
	r.list = append(r.list, refusal{agent: agent, signal: sig.ID(), reason: bus.ErrorType(err)})
	r.mu.Unlock()
}

func (r *refusals) all() []refusal {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]refusal(nil), r.list...)
}

// refusingHarness is a harness whose runtime reports its refusals.
func refusingHarness(t *testing.T) (*harness, *refusals) {
	rs := &refusals{}
	h := newHarness(t, func(c *Config) { c.OnRefused = rs.note })
	return h, rs
}

// oversized returns a counter.increment the log refuses: an extension
// attribute past the log's attribute limit, as only the Go API can make.
func oversized(t *testing.T) bus.Signal {
	sig := signal(t, "counter.increment", map[string]int{"by": 1000})
	sig.SetExtension("padding", strings.Repeat("x", 128<<10))
	return sig
}

// TestBatchWithARefusedSignalCommitsTheRest: one signal the log refuses,
// queued among valid ones, is refused alone, with the log's reason, and
// handed to OnRefused (the node's dead letter); the others commit.
func TestBatchWithARefusedSignalCommitsTheRest(t *testing.T) {
	h, rs := refusingHarness(t)
	h.start("counter", "c1", Options{})
	g := h.gateAppends("c1")
	var rest []bus.Signal
	bad := oversized(t)
	for i := range 30 {
		if i == 12 {
			rest = append(rest, bad)
		}
		rest = append(rest, signal(t, "counter.increment", map[string]int{"by": 2}))
	}
	h.queueBehindCommit("c1", signal(t, "counter.increment", map[string]int{"by": 1}), rest...)
	close(g.gate)
	testkit.Eventually(h.t, "the 31 valid signals committed", func() bool { info, _ := h.rt.State("c1"); return info.Version == 31 })
	if got := h.state("c1")["count"]; got != 61.0 {
		t.Fatalf("count = %v, want 1+30*2 = 61", got)
	}
	testkit.Eventually(h.t, "the oversized signal refused", func() bool { return len(rs.all()) == 1 })
	if got := rs.all()[0]; got != (refusal{agent: "c1", signal: bad.ID(), reason: bus.ReasonTooLarge}) {
		t.Fatalf("refused %+v, want the oversized signal %s as too_large", got, bad.ID())
	}
}

// TestRefusedCommitIsReported: a signal decided alone whose commit the
// log refuses is reported to OnRefused, and a caller hears the reason.
func TestRefusedCommitIsReported(t *testing.T) {
	h, rs := refusingHarness(t)
	h.start("counter", "c1", Options{})
	bad := oversized(t)
	if err := h.rt.Cast("c1", bad); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(h.t, "the cast refused", func() bool { return len(rs.all()) == 1 })
	if got := rs.all()[0]; got.signal != bad.ID() || got.reason != bus.ReasonTooLarge {
		t.Fatalf("refused %+v", got)
	}
	_, err := h.rt.Call(t.Context(), "c1", oversized(t))
	if bus.ErrorType(err) != bus.ReasonTooLarge {
		t.Fatalf("call: %v, want too_large", err)
	}
	testkit.Eventually(h.t, "the call refused too", func() bool { return len(rs.all()) == 2 })
}

// TestRefusedDecisionIsNotCommitted: a signal its agent's decision
// refuses (params that fail the action's schema) is not committed: the
// caller hears why, OnRefused gets it, the state and version stay, and
// its id stays free for the corrected signal.
func TestRefusedDecisionIsNotCommitted(t *testing.T) {
	h, rs := refusingHarness(t)
	h.start("counter", "c1", Options{})
	h.mustCall("c1", "counter.increment", map[string]int{"by": 1})
	bad := signal(t, "counter.increment", map[string]string{"by": "two"})
	r, err := h.rt.Call(t.Context(), "c1", bad)
	if bus.ErrorType(err) != agents.ReasonInvalidParams || r.Committed {
		t.Fatalf("bad params: %+v %v, want invalid_params, not committed", r, err)
	}
	if got := rs.all(); len(got) != 1 || got[0].signal != bad.ID() || got[0].reason != agents.ReasonInvalidParams {
		t.Fatalf("refused %+v", got)
	}
	// Queued among good ones, it is refused alone.
	g := h.gateAppends("c1")
	bad2 := signal(t, "counter.increment", map[string]string{"by": "three"})
	h.queueBehindCommit("c1", signal(t, "counter.increment", map[string]int{"by": 10}),
		signal(t, "counter.increment", map[string]int{"by": 100}), bad2, signal(t, "counter.increment", map[string]int{"by": 1000}))
	close(g.gate)
	testkit.Eventually(h.t, "the good ones committed", func() bool { info, _ := h.rt.State("c1"); return info.Version == 4 })
	if got := h.state("c1")["count"]; got != 1111.0 {
		t.Fatalf("count = %v, want 1111", got)
	}
	testkit.Eventually(h.t, "the second refusal", func() bool { return len(rs.all()) == 2 })
	for e, err := range h.log.ReadStream("agent/c1", eventlog.ReadOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		if id := e.Event.ID(); id == bad.ID() || id == bad2.ID() {
			t.Fatalf("the refused signal %s is in the log", id)
		}
	}
	// The corrected signal, same source and id, is new.
	fixed := bad.Clone()
	if err := bus.SetJSONData(&fixed, map[string]int{"by": 2}); err != nil {
		t.Fatal(err)
	}
	r, err = h.rt.Call(t.Context(), "c1", fixed)
	if err != nil || r.Duplicate || r.Version != 5 {
		t.Fatalf("the corrected resend: %+v %v, want version 5, not a duplicate", r, err)
	}
}
