package runtime

import (
	"slices"
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

// TestAnInvalidUTF8SignalIDIsRefusedBeforeItsCommit: a signal whose id
// is not valid UTF-8 is refused at its commit as invalid_attribute (the
// log holds CloudEvents, whose attributes are Unicode strings): nothing
// of it is in the log, the agent goes on, and recovery brings it back as
// it was.
func TestAnInvalidUTF8SignalIDIsRefusedBeforeItsCommit(t *testing.T) {
	h := newHarness(t)
	h.start("counter", "c1", Options{SnapshotEvery: MaxSnapshotEvery})
	h.mustCall("c1", "counter.increment", map[string]int{"by": 1})
	sig := signal(t, "counter.increment", map[string]int{"by": 2})
	sig.SetID("in-\xff-1")
	if _, err := h.rt.Call(t.Context(), "c1", sig); bus.ErrorType(err) != bus.ReasonInvalidAttribute || !strings.Contains(err.Error(), "UTF-8") {
		t.Fatalf("call with an id that is not UTF-8: %v, want it refused as %s naming UTF-8", err, bus.ReasonInvalidAttribute)
	}
	// The outcomes of the first call's directives may be recorded any
	// time: what must not be there is a second signal.
	es := h.entries("agent/c1")
	if n := len(slices.DeleteFunc(slices.Clone(es), func(typ string) bool { return typ != "counter.increment" })); n != 1 {
		t.Fatalf("%d signals in the log, want the first call's alone: %v", n, es)
	}
	h.mustCall("c1", "counter.increment", map[string]int{"by": 4})
	h.restart()
	if got := h.state("c1")["count"]; got != 5.0 {
		t.Fatalf("count after recovery %v, want 1+4", got)
	}
}

// TestDecidesAnIDAsJSONCarriedIt: a cmd record names the signal it
// decides by id, in JSON, where an id that is not valid UTF-8 (written
// before the log refused one) has each bad byte replaced by U+FFFD;
// recovery pairs such a record with its signal still, and with no other.
func TestDecidesAnIDAsJSONCarriedIt(t *testing.T) {
	for _, c := range []struct {
		record, signal string
		want           bool
	}{
		{"s-1", "s-1", true},
		{"s-1", "s-2", false},
		{"in-\ufffd-1", "in-\xff-1", true},
		{"in-\ufffd-1", "in-\xff-2", false},
		{"in-\xff-1", "in-\ufffd-1", false},
	} {
		sig := signal(t, "counter.increment", nil)
		sig.SetID(c.signal)
		if got := decides(&cmdRecord{Signal: c.record}, &sig); got != c.want {
			t.Errorf("record of %q decides signal %q: %v, want %v", c.record, c.signal, got, c.want)
		}
	}
}

// restartTolerant is restart for a log recovery partly fails on: it
// returns how many agents came back and leaves the failures to the test.
func (h *harness) restartTolerant() int {
	h.t.Helper()
	n, _ := h.restartRecovering()
	return n
}
