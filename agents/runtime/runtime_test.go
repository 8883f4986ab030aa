package runtime

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/jido-bus/jido-bus/agents"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/internal/testkit"
)

func TestCounterCallCommitsThenReplies(t *testing.T) {
	h := newHarness(t)
	h.start("counter", "c1", Options{})
	r := h.mustCall("c1", "counter.increment", map[string]int{"by": 2})
	if got := stateOf(t, r.State)["count"]; got != 2.0 || r.Version != 1 {
		t.Fatalf("reply state %s version %d", r.State, r.Version)
	}
	r = h.mustCall("c1", "counter.increment", map[string]int{"by": 3})
	if got := stateOf(t, r.State)["count"]; got != 5.0 || r.Version != 2 {
		t.Fatalf("reply state %s version %d", r.State, r.Version)
	}
	testkit.Eventually(h.t, "two counter.changed", func() bool { return len(h.emittedOf("counter.changed")) == 2 })
	// Each signal is followed by its cmd record in the same batch; the
	// outcome of each emit is recorded once it ran, carried by the next
	// cmd record or in an effects record of its own.
	testkit.Eventually(h.t, "both outcomes recorded", func() bool {
		o := h.outcomes("agent/c1")
		return o["1/0"] == OutcomeOK && o["2/0"] == OutcomeOK
	})
	var decisions []string
	for _, typ := range h.entries("agent/c1") {
		if typ != TypeEffects {
			decisions = append(decisions, typ)
		}
	}
	if want := []string{TypeStarted, "counter.increment", TypeCmd, "counter.increment", TypeCmd}; !slices.Equal(decisions, want) {
		t.Fatalf("stream agent/c1 = %v, want %v", decisions, want)
	}
	if idx := h.entries(IndexStream); !slices.Equal(idx, []string{TypeRegistered}) {
		t.Fatalf("index = %v", idx)
	}
}

func TestDuplicateSignalIsDecidedOnce(t *testing.T) {
	h := newHarness(t)
	h.start("counter", "c1", Options{})
	sig := signal(t, "counter.increment", map[string]int{"by": 2})
	ctx := context.Background()
	if _, err := h.rt.Call(ctx, "c1", sig); err != nil {
		t.Fatal(err)
	}
	r, err := h.rt.Call(ctx, "c1", sig)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Duplicate || r.Version != 1 || stateOf(t, r.State)["count"] != 2.0 {
		t.Fatalf("retry = %+v %s", r, r.State)
	}
}

func TestStartErrors(t *testing.T) {
	h := newHarness(t)
	h.start("counter", "c1", Options{})
	ctx := context.Background()
	cases := []struct {
		name string
		req  StartRequest
		want string
	}{
		{"unknown type", StartRequest{Type: "nosuch", ID: "x"}, ReasonUnknownType},
		{"duplicate id", StartRequest{Type: "counter", ID: "c1"}, ReasonAlreadyExists},
		{"bad id", StartRequest{Type: "counter", ID: "bad id"}, bus.ReasonInvalidAgentID},
		{"bad option", StartRequest{Type: "counter", ID: "c2", Options: Options{OnParentDeath: "explode"}}, bus.ReasonInvalidRequest},
		{"bad policy", StartRequest{Type: "counter", ID: "c2", Options: Options{ErrorPolicy: ErrorPolicy{Kind: PolicyMaxErrors}}}, bus.ReasonInvalidRequest},
		{"unknown policy func", StartRequest{Type: "counter", ID: "c2", Options: Options{ErrorPolicy: ErrorPolicy{Kind: PolicyFunc, Func: "nope"}}}, bus.ReasonInvalidRequest},
		{"bad initial state", StartRequest{Type: "counter", ID: "c2", InitialState: map[string]any{"count": "many"}}, bus.ReasonInvalidRequest},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := h.rt.Start(ctx, c.req)
			if bus.ErrorType(err) != c.want {
				t.Fatalf("Start = %v, want %s", err, c.want)
			}
		})
	}
	// A generated id is a ULID.
	info, err := h.rt.Start(ctx, StartRequest{Type: "counter"})
	if err != nil || len(info.ID) != 26 {
		t.Fatalf("generated id %q: %v", info.ID, err)
	}
}

func TestUnknownAgentAndBadSignals(t *testing.T) {
	h := newHarness(t)
	h.start("counter", "c1", Options{})
	if _, err := h.call("nosuch", "counter.increment", nil); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown agent: %v", err)
	}
	// Data that fails the action's schema: refused to the caller, not
	// kept in the log (refused_test.go).
	if r, err := h.call("c1", "counter.increment", map[string]any{"by": "two"}); bus.ErrorType(err) != agents.ReasonInvalidParams || r.Committed {
		t.Fatalf("bad params: %+v %v", r, err)
	}
	// No route: recorded in the log, an error of the agent's.
	if _, err := h.call("c1", "counter.explode", nil); err == nil || bus.ErrorType(err) != "no_route" {
		t.Fatalf("no route: %v", err)
	}
	// The agent is unharmed.
	if r := h.mustCall("c1", "counter.increment", nil); stateOf(t, r.State)["count"] != 1.0 || r.Version != 2 {
		t.Fatalf("after bad signals: %s v%d", r.State, r.Version)
	}
	testkit.Eventually(h.t, "one error counted", func() bool {
		info, _ := h.rt.State("c1")
		return info.ErrorCount == 1
	})
}
