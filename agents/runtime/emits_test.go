package runtime

import (
	"cmp"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/agents"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/codec"
	"github.com/jido-bus/jido-bus/bus/dispatch"
	"github.com/jido-bus/jido-bus/bus/natsserver"
	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/jido-bus/jido-bus/internal/testkit"
)

// talker says what it is told: talk.said, on its own emit subject or on
// the subject the signal names.
func talkerDefinition(t testing.TB) *agents.Definition {
	t.Helper()
	type params struct {
		Text    string `json:"text"`
		Subject string `json:"subject"`
		Twice   bool   `json:"twice"`
	}
	say := agents.Action{Name: "say", Run: agents.Typed(func(env agents.Env, p params) (agents.Result, error) {
		e, err := agents.NewEmit("talk.said", map[string]any{"text": p.Text})
		if p.Subject != "" {
			e.Dispatch = &agents.Dispatch{Adapter: "nats", Target: p.Subject}
		}
		r := agents.Result{Directives: []agents.Directive{e}}
		if p.Twice {
			again, err := agents.NewEmit("talk.echoed", map[string]any{"text": p.Text})
			if err != nil {
				return agents.Result{}, err
			}
			r.Directives = append(r.Directives, again)
		}
		return r, err
	})}
	def, err := agents.Define(agents.Spec{Name: "talker", Schema: `{"type":"object"}`, Actions: []agents.Action{say},
		Routes: []agents.Route{{Pattern: "talk.say", Action: "say"}}})
	if err != nil {
		t.Fatal(err)
	}
	return def
}

func withTalker(t testing.TB) func(*Config) {
	return func(c *Config) {
		if err := c.Types.Register(talkerDefinition(t)); err != nil {
			t.Fatal(err)
		}
	}
}

// readEmits reads every page of req, limit emits at a time.
func readEmits(t *testing.T, l EmitLog, req EmitsRequest) []Emitted {
	t.Helper()
	var all []Emitted
	for range 1000 {
		page, err := ReadEmits(t.Context(), l, bus.Subjects{}, req, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, page.Emits...)
		if !page.More {
			return all
		}
		if page.Next == req.After {
			t.Fatalf("page after %s did not move on: %+v", req.After, page)
		}
		req.After = page.Next
	}
	t.Fatal("more than 1000 pages")
	return nil
}

// received decodes the messages sub holds now, n of them.
func received(t *testing.T, sub *nats.Subscription, n int) []*nats.Msg {
	t.Helper()
	var out []*nats.Msg
	for range n {
		out = append(out, nextMsg(t, sub))
	}
	return out
}

// sameAsPublished checks that the emits read are the messages published,
// in order: the same event and the same position.
func sameAsPublished(t *testing.T, read []Emitted, msgs []*nats.Msg, global bool) {
	t.Helper()
	if len(read) != len(msgs) {
		t.Fatalf("read %d emits, %d were published", len(read), len(msgs))
	}
	for i, m := range msgs {
		got := read[i]
		pub, _, err := (&codec.Decoder{}).Decode(m, "")
		if err != nil {
			t.Fatal(err)
		}
		var ev bus.Signal
		if err := json.Unmarshal(got.Event, &ev); err != nil {
			t.Fatal(err)
		}
		a, _ := json.Marshal(pub)
		b, _ := json.Marshal(ev)
		if string(a) != string(b) {
			t.Errorf("emit %d: read\n%s\npublished\n%s", i, b, a)
		}
		p := positionOf(t, m)
		want := EmitCursor{Seq: p.Seq, Index: p.Index}
		if global {
			want.Seq = p.GlobalSeq
		}
		if got.Stream != p.Stream || got.Seq != p.Seq || got.GlobalSeq != p.GlobalSeq || got.Index != p.Index || got.Position != want || got.Subject != m.Subject {
			t.Errorf("emit %d: read at %+v, published at %+v on %s", i, got, p, m.Subject)
		}
	}
}

// TestReadEmitsIsWhatWasPublished: reading emits page by page, of one
// stream or of the whole log, from the start or from any position, gives
// exactly what was published on the agents' emit subjects after that
// position, in order: the same events, the same positions. Lifecycle
// signals are not emits; a decision's several emits are each one.
func TestReadEmitsIsWhatWasPublished(t *testing.T) {
	h, sub := natsHarness(t, "jido.emit.*.talk.>", nil, withTalker(t))
	h.start("talker", "t1", Options{})
	h.start("talker", "t2", Options{})
	for i := range 6 {
		h.mustCall([]string{"t1", "t2"}[i%2], "talk.say", map[string]any{"text": strings.Repeat("x", i), "twice": i%3 == 0})
	}
	// Each agent publishes in its order; the two agents' emits interleave
	// as they run, and the log orders them.
	msgs := received(t, sub, 8)
	slices.SortStableFunc(msgs, func(a, b *nats.Msg) int {
		p, q := positionOf(t, a), positionOf(t, b)
		return cmp.Or(cmp.Compare(p.GlobalSeq, q.GlobalSeq), cmp.Compare(p.Index, q.Index))
	})
	var ofT1 []*nats.Msg
	for _, m := range msgs {
		if strings.HasPrefix(m.Subject, "jido.emit.t1.") {
			ofT1 = append(ofT1, m)
		}
	}
	testkit.Eventually(h.t, "every outcome recorded", func() bool {
		for _, e := range readEmits(t, h.log, EmitsRequest{}) {
			if e.Status != EmitPublished {
				return false
			}
		}
		return true
	})
	for _, limit := range []int{0, 1, 2, 3} {
		sameAsPublished(t, readEmits(t, h.log, EmitsRequest{Limit: limit}), msgs, true)
		sameAsPublished(t, readEmits(t, h.log, EmitsRequest{Stream: "agent/t1", Limit: limit}), ofT1, false)
	}
	// From every position, what follows it.
	for i, m := range ofT1 {
		p := positionOf(t, m)
		after := EmitCursor{Seq: p.Seq, Index: p.Index}
		sameAsPublished(t, readEmits(t, h.log, EmitsRequest{Stream: "agent/t1", After: after}), ofT1[i+1:], false)
		sameAsPublished(t, readEmits(t, h.log, EmitsRequest{After: EmitCursor{Seq: p.GlobalSeq, Index: p.Index}}), msgs[indexOf(msgs, m)+1:], true)
	}
	// Past the head: nothing, and next stays.
	head := EmitCursorAt(1 << 40)
	page, err := ReadEmits(t.Context(), h.log, bus.Subjects{}, EmitsRequest{Stream: "agent/t1", After: head}, 1<<20)
	if err != nil || len(page.Emits) != 0 || page.More || page.Next != head {
		t.Errorf("a read past the head: %+v, %v; want no emit, next %s", page, err, head)
	}
}

func indexOf(msgs []*nats.Msg, m *nats.Msg) int {
	for i := range msgs {
		if msgs[i] == m {
			return i
		}
	}
	return -1
}

// TestReadEmitsFilters: types keeps the emits of matching types; what an
// agent sends anywhere but its own emit subjects (a subject of another
// name, a default_dispatch to the logger) is not read, as a subscriber
// to <prefix>.emit.<id>.> never gets it; a fixed subject that is one of
// its own is read, with that subject.
func TestReadEmitsFilters(t *testing.T) {
	h, sub := natsHarness(t, "jido.emit.>", nil, withTalker(t))
	h.start("talker", "t1", Options{})
	h.start("talker", "quiet", Options{DefaultDispatch: &dispatch.Config{Kind: dispatch.KindNoop}})
	h.mustCall("t1", "talk.say", map[string]any{"text": "a", "twice": true})
	h.mustCall("t1", "talk.say", map[string]any{"text": "b", "subject": "audit.said"})
	h.mustCall("t1", "talk.say", map[string]any{"text": "c", "subject": "jido.emit.t2.talk.said"})
	h.mustCall("t1", "talk.say", map[string]any{"text": "d", "subject": "jido.emit.t1.custom"})
	h.mustCall("quiet", "talk.say", map[string]any{"text": "e"})
	texts := func(es []Emitted) string {
		var out []string
		for _, e := range es {
			var ev bus.Signal
			if err := json.Unmarshal(e.Event, &ev); err != nil {
				t.Fatal(err)
			}
			var d struct{ Text string }
			_ = json.Unmarshal(ev.Data(), &d)
			out = append(out, ev.Type()+":"+d.Text+"@"+e.Subject)
		}
		return strings.Join(out, " ")
	}
	for _, tc := range []struct {
		req  EmitsRequest
		want string
	}{
		{EmitsRequest{}, "talk.said:a@jido.emit.t1.talk.said talk.echoed:a@jido.emit.t1.talk.echoed talk.said:d@jido.emit.t1.custom"},
		{EmitsRequest{Stream: "agent/t1", Types: "talk.echoed"}, "talk.echoed:a@jido.emit.t1.talk.echoed"},
		{EmitsRequest{Types: "talk.*", Limit: 1}, "talk.said:a@jido.emit.t1.talk.said talk.echoed:a@jido.emit.t1.talk.echoed talk.said:d@jido.emit.t1.custom"},
		{EmitsRequest{Types: "nothing.**"}, ""},
		{EmitsRequest{Stream: "agent/quiet"}, ""},
	} {
		if got := texts(readEmits(t, h.log, tc.req)); got != tc.want {
			t.Errorf("%+v: read %q, want %q", tc.req, got, tc.want)
		}
	}
	// What a subscriber to t1's emit subjects got is what was read.
	var live []string
	for len(live) < 3 {
		if m := nextMsg(t, sub); strings.HasPrefix(m.Subject, "jido.emit.t1.") && !strings.Contains(m.Subject, ".jido.agent.") {
			live = append(live, m.Subject)
		}
	}
	if got := strings.Join(live, " "); got != "jido.emit.t1.talk.said jido.emit.t1.talk.echoed jido.emit.t1.custom" {
		t.Errorf("t1's subscriber got %s", got)
	}
}

// TestReadEmitsRefusals: a request that cannot be read says why, with
// the machine word a reply carries.
func TestReadEmitsRefusals(t *testing.T) {
	h := newHarness(t)
	h.start("probe", "p1", Options{})
	for _, tc := range []struct {
		req  EmitsRequest
		want string
	}{
		{EmitsRequest{Limit: -1}, bus.ReasonInvalidRequest},
		{EmitsRequest{Types: "a..b"}, bus.ReasonInvalidPattern},
		{EmitsRequest{Stream: "agent//p1"}, eventlog.ReasonInvalidStream},
	} {
		if _, err := ReadEmits(t.Context(), h.log, bus.Subjects{}, tc.req, 1<<20); bus.ErrorType(err) != tc.want {
			t.Errorf("%+v: %v, want %s", tc.req, err, tc.want)
		}
	}
	if _, err := ReadEmits(t.Context(), h.log, bus.Subjects{}, EmitsRequest{Stream: "agent/nosuch"}, 1<<20); !errors.Is(err, eventlog.ErrNotFound) {
		t.Errorf("a stream that does not exist: %v, want not found", err)
	}
}

// TestReadEmitsLeavesOutWhatWasNotPublished: an emit whose recorded
// outcome says it failed (NATS refused it: over the server's max
// payload) or was dropped (the agent stopped before it ran) is not read;
// a subscriber never got it either.
func TestReadEmitsLeavesOutWhatWasNotPublished(t *testing.T) {
	small := func(o *natsserver.Options) { o.MaxPayload = 2048 }
	h, sub := natsHarness(t, "jido.emit.t1.talk.>", []func(*natsserver.Options){small}, withTalker(t))
	h.start("talker", "t1", Options{})
	h.mustCall("t1", "talk.say", map[string]any{"text": "short"})
	h.mustCall("t1", "talk.say", map[string]any{"text": strings.Repeat("long", 1000)})
	h.mustCall("t1", "talk.say", map[string]any{"text": "after"})
	msgs := received(t, sub, 2)
	testkit.Eventually(h.t, "the outcomes recorded", func() bool {
		o := h.outcomes("agent/t1")
		return len(o) == 3
	})
	if o := h.outcomes("agent/t1"); o["2/0"] != OutcomeFailed {
		t.Fatalf("outcomes %v: the long emit did not fail; the test needs it to", o)
	}
	sameAsPublished(t, readEmits(t, h.log, EmitsRequest{Stream: "agent/t1"}), msgs, false)

	// Dropped: the agent stops while a directive before the emit runs.
	h.start("probe", "p1", Options{})
	h.gate("held")
	if _, err := h.rt.Call(t.Context(), "p1", signal(t, "probe.block_emit", map[string]any{"name": "held"})); err != nil {
		t.Fatal(err)
	}
	stopWhileHeld(t, h, "p1", "held")
	if o := h.outcomes("agent/p1"); o["1/1"] != OutcomeDropped {
		t.Fatalf("outcomes %v: the emit was not dropped; the test needs it to be", o)
	}
	if got := readEmits(t, h.log, EmitsRequest{Stream: "agent/p1"}); len(got) != 0 {
		t.Errorf("read a dropped emit: %+v", got)
	}
}

// TestReadEmitsUnconfirmed: an emit whose outcome is not recorded yet is
// read, unconfirmed — a reader that subscribed before reading must not
// miss it, and it may have been published already — and published once
// the outcome is in. Its position stays.
func TestReadEmitsUnconfirmed(t *testing.T) {
	h, sub := natsHarness(t, "jido.emit.t1.talk.>", nil, withTalker(t), func(c *Config) { c.EffectsLinger = time.Hour })
	h.start("talker", "t1", Options{})
	h.mustCall("t1", "talk.say", map[string]any{"text": "one"})
	msgs := received(t, sub, 1)
	read := readEmits(t, h.log, EmitsRequest{Stream: "agent/t1"})
	sameAsPublished(t, read, msgs, false)
	if read[0].Status != EmitUnconfirmed {
		t.Errorf("status %s before any outcome is recorded, want %s", read[0].Status, EmitUnconfirmed)
	}
	// A later decision carries the outcome, once NATS has confirmed the
	// emit (a flush after the subscriber got it): decide until one does.
	// The last decision's own emit stays unconfirmed.
	for i := 2; ; i++ {
		h.mustCall("t1", "talk.say", map[string]any{"text": "again"})
		msgs = append(msgs, received(t, sub, 1)...)
		read = readEmits(t, h.log, EmitsRequest{Stream: "agent/t1"})
		sameAsPublished(t, read, msgs, false)
		if last := read[len(read)-1]; last.Status != EmitUnconfirmed {
			t.Fatalf("the last emit %s is %s before any outcome of it can be recorded, want %s", last.Position, last.Status, EmitUnconfirmed)
		}
		if read[0].Status == EmitPublished {
			break
		}
		if i == 1000 {
			t.Fatalf("after %d decisions the first emit is still %s", i, read[0].Status)
		}
	}
}

// TestReadEmitsAcrossIncarnations: an agent stopped and started again
// under its id continues its stream, its versions counting anew; its
// emits of both incarnations are read, each with its own outcome.
func TestReadEmitsAcrossIncarnations(t *testing.T) {
	h, sub := natsHarness(t, "jido.emit.t1.talk.>", nil, withTalker(t))
	h.start("talker", "t1", Options{})
	h.mustCall("t1", "talk.say", map[string]any{"text": "first life"})
	first := nextMsg(t, sub) // published before the stop, or it would be dropped
	if err := h.rt.Stop(t.Context(), "t1", "again"); err != nil {
		t.Fatal(err)
	}
	h.start("talker", "t1", Options{})
	h.mustCall("t1", "talk.say", map[string]any{"text": "second life", "twice": true})
	msgs := append([]*nats.Msg{first}, received(t, sub, 2)...)
	testkit.Eventually(h.t, "every outcome recorded", func() bool {
		read := readEmits(t, h.log, EmitsRequest{Stream: "agent/t1"})
		return len(read) == 3 && read[0].Status == EmitPublished && read[2].Status == EmitPublished
	})
	sameAsPublished(t, readEmits(t, h.log, EmitsRequest{Stream: "agent/t1", Limit: 1}), msgs, false)
}

// TestReadEmitsAfterTruncation: a position whose next entries were
// truncated away is an error that says so (those emits are lost to the
// reader); from the start, a reader gets what is retained.
func TestReadEmitsAfterTruncation(t *testing.T) {
	h := newHarness(t, withTalker(t))
	h.start("talker", "t1", Options{})
	for range 4 {
		h.mustCall("t1", "talk.say", map[string]any{"text": "x"})
	}
	all := readEmits(t, h.log, EmitsRequest{Stream: "agent/t1"})
	if len(all) != 4 {
		t.Fatalf("read %d emits, want 4", len(all))
	}
	if _, err := h.log.TruncateBefore(t.Context(), "agent/t1", all[2].Seq-1); err != nil {
		t.Fatal(err)
	}
	_, err := ReadEmits(t.Context(), h.log, bus.Subjects{}, EmitsRequest{Stream: "agent/t1", After: all[0].Position}, 1<<20)
	if !errors.Is(err, eventlog.ErrGone) {
		t.Errorf("after a truncated position: %v, want gone", err)
	}
	if got := readEmits(t, h.log, EmitsRequest{Stream: "agent/t1"}); len(got) != 2 || got[0].Position != all[2].Position {
		t.Errorf("from the start of a truncated stream: %+v, want the last two emits", got)
	}
}

// TestEmitCursorText: the text and JSON forms of a position.
func TestEmitCursorText(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want EmitCursor
		text string
	}{
		{`"0"`, EmitCursor{}, "0"},
		{`0`, EmitCursor{}, "0"},
		{`"12"`, EmitCursorAt(12), "12"},
		{`12`, EmitCursorAt(12), "12"},
		{`"12.0"`, EmitCursor{Seq: 12, Index: 0}, "12.0"},
		{`"12.3"`, EmitCursor{Seq: 12, Index: 3}, "12.3"},
		{`null`, EmitCursor{}, "0"},
	} {
		var c EmitCursor
		if err := json.Unmarshal([]byte(tc.in), &c); err != nil {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		if c.String() != tc.text || (c.String() != EmitCursorAt(c.Seq).String()) != (tc.want.Index >= 0 && tc.want.Seq > 0) {
			t.Errorf("%s: %+v (%s), want %+v (%s)", tc.in, c, c, tc.want, tc.text)
		}
		b, _ := json.Marshal(c)
		if string(b) != `"`+tc.text+`"` {
			t.Errorf("%s encodes as %s", tc.in, b)
		}
	}
	for _, bad := range []string{`"x"`, `"12."`, `"12.-1"`, `".1"`, `-3`, `"1.2.3"`, `true`} {
		var c EmitCursor
		if err := json.Unmarshal([]byte(bad), &c); err == nil {
			t.Errorf("%s read as %+v, want an error", bad, c)
		}
	}
}
