package runtime

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/eventlog"
)

// TestRecoveryNeverLosesAnAgent: whatever one entry of an agent's stream
// holds, recovery brings the agent back or holds it as failed, with a
// reason naming the stream and sequence — in State, List and Counts —
// never not_found; its id is refused to Start until Stop closes it, after
// which it starts again and survives a restart. The streams are written by
// hand into a real log.
func TestRecoveryNeverLosesAnAgent(t *testing.T) {
	at := time.Unix(1_700_000_000, 0).UTC()
	rec := func(typ, id string, data any) bus.Signal {
		s, err := record(typ, id, "", at, data)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	input := func(id string) bus.Signal {
		s := signal(t, "counter.increment", map[string]int{"by": 1})
		s.SetID(id)
		return s
	}
	started := func(id, typ string) bus.Signal {
		return rec(TypeStarted, "started:"+id, startedRecord{ID: id, Type: typ, Stream: "agent/" + id})
	}
	cmd := func(signal string, version uint64) bus.Signal {
		return rec(TypeCmd, "cmd:"+signal, cmdRecord{Signal: signal, Version: version})
	}
	undecodable := func() bus.Signal {
		s := rec(TypeCmd, "cmd:broken", nil)
		if err := s.SetData("application/json", []byte(`{"signal":`)); err != nil {
			t.Fatal(err)
		}
		return s
	}
	cases := []struct {
		name   string
		typ    string
		stream []bus.Signal // nil: no stream at all
		want   string       // in the reason
	}{
		{"decision of another signal", "counter", []bus.Signal{started("a1", "counter"), input("in-1"), cmd("in-2", 1)}, "agent/a1/3"},
		{"truncated stream", "counter", []bus.Signal{input("in-1"), cmd("in-1", 1)}, "agent/a2/1"},
		{"undecodable entry", "counter", []bus.Signal{started("a3", "counter"), input("in-1"), undecodable()}, "agent/a3/3"},
		{"type no longer registered", "gone", []bus.Signal{started("a4", "gone")}, "agent/a4/1"},
		{"no stream", "counter", nil, "agent/a5"},
	}
	h := newHarness(t)
	h.start("counter", "ok", Options{})
	h.mustCall("ok", "counter.increment", nil)
	for i, c := range cases {
		id := "a" + string(rune('1'+i))
		parts := []eventlog.StreamAppend{{Stream: IndexStream, Events: []bus.Signal{
			rec(TypeRegistered, "registered:"+id, indexRecord{ID: id, Type: c.typ, Stream: "agent/" + id}),
		}}}
		if c.stream != nil {
			parts = append(parts, eventlog.StreamAppend{Stream: "agent/" + id, Events: c.stream})
		}
		if _, err := h.log.AppendMulti(t.Context(), parts); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
	}
	h.restartTolerant()

	if got := h.rt.Counts().Failed; got != len(cases) {
		t.Fatalf("Counts().Failed = %d, want %d", got, len(cases))
	}
	listed := map[string]Info{}
	for _, info := range h.rt.List() {
		listed[info.ID] = info
	}
	if listed["ok"].Status != StatusRunning {
		t.Fatalf("the sound agent after recovery: %+v", listed["ok"])
	}
	for i, c := range cases {
		id := "a" + string(rune('1'+i))
		info, err := h.rt.State(id)
		if err != nil || info.Status != StatusFailed || !strings.Contains(info.Reason, c.want) {
			t.Fatalf("%s: State(%s) = %+v, %v; want status failed, reason naming %s", c.name, id, info, err, c.want)
		}
		if l := listed[id]; l.Status != StatusFailed || l.Reason != info.Reason {
			t.Fatalf("%s: List has %+v", c.name, l)
		}
		_, err = h.rt.Start(t.Context(), StartRequest{Type: "counter", ID: id})
		if bus.ErrorType(err) != ReasonAlreadyExists || !strings.Contains(err.Error(), "failed at recovery") {
			t.Fatalf("%s: Start of a failed id: %v", c.name, err)
		}
		if err := h.rt.Stop(t.Context(), id, "cleared"); err != nil {
			t.Fatalf("%s: Stop of a failed agent: %v", c.name, err)
		}
		h.start("counter", id, Options{})
		h.mustCall(id, "counter.increment", map[string]int{"by": 5})
	}
	if n := h.restartTolerant(); n != len(cases)+1 {
		t.Fatalf("recovered %d agents after clearing, want %d", n, len(cases)+1)
	}
	for i := range cases {
		id := "a" + string(rune('1'+i))
		if got := h.state(id)["count"]; got != 5.0 {
			t.Fatalf("%s restarted: count %v, want 5", id, got)
		}
	}
}

// TestRecoveryOfAnInvalidUTF8SignalID: a signal whose id is not valid
// UTF-8 is named in its cmd record as JSON carries it; recovery still
// pairs the two.
func TestRecoveryOfAnInvalidUTF8SignalID(t *testing.T) {
	h := newHarness(t)
	h.start("counter", "c1", Options{SnapshotEvery: MaxSnapshotEvery})
	sig := signal(t, "counter.increment", map[string]int{"by": 2})
	sig.SetID("in-\xff-1")
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if _, err := h.rt.Call(ctx, "c1", sig); err != nil {
		t.Skipf("the runtime refuses the id before its commit: %v", err)
	}
	h.restart()
	if got := h.state("c1")["count"]; got != 2.0 {
		t.Fatalf("count after recovery %v, want 2", got)
	}
}

// restartTolerant is restart for a log recovery partly fails on: it
// returns how many agents came back and leaves the failures to the test.
func (h *harness) restartTolerant() int {
	h.t.Helper()
	n, _ := h.restartRecovering()
	return n
}
