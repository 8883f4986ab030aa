package runtime

import (
	"bytes"
	"encoding/json"
	"net/url"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/cloudevents/sdk-go/v2/types"
	"pgregory.net/rapid"

	"github.com/jido-bus/jido-bus/agents"
	"github.com/jido-bus/jido-bus/agents/builtin"
	"github.com/jido-bus/jido-bus/bus"
)

// oldEncodeAll is DirectiveCodec.EncodeAll as it was before the built-in
// directives were encoded by hand: each directive through json.Marshal,
// its kind spliced in front.
func oldEncodeAll(t *rapid.T, ds []agents.Directive) json.RawMessage {
	out := []byte{'['}
	for i, d := range ds {
		body, err := json.Marshal(d)
		if err != nil {
			t.Fatalf("directive %d: %v", i, err)
		}
		kind, _ := json.Marshal(d.DirectiveKind())
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, `{"kind":`...)
		out = append(out, kind...)
		if len(body) > 2 {
			out = append(out, ',')
		}
		out = append(out, body[1:]...)
	}
	return append(out, ']')
}

// TestCmdRecordOf: the cmd record the inbox loop commits is, byte for
// byte, the record it committed before its directives were written by
// hand into its data — encoding/json's directives in a cmdRecord, built
// by record — for the counter's decisions and for directives of every
// kind with any strings, any signal source and any carried outcomes.
func TestCmdRecordOf(t *testing.T) {
	def, err := builtin.NewCounter()
	if err != nil {
		t.Fatal(err)
	}
	codec := agents.NewDirectiveCodec()
	at := time.Date(2026, 11, 28, 1, 2, 3, 4, time.UTC)
	rapid.Check(t, func(t *rapid.T) {
		src := rapid.SampledFrom([]string{"bench", "/agent/c1", "https://x.example/a?b#c", "urn:x:y", "//h/p", "a b"}).Draw(t, "source")
		sig, err := bus.NewSignal(builtin.CounterIncrement, src, json.RawMessage(`{"by":2}`))
		if err != nil {
			t.Fatal(err)
		}
		sig.SetID(recordStrings.Filter(func(s string) bool { return len(bytes.TrimSpace([]byte(s))) > 0 }).Draw(t, "id"))
		var ds []agents.Directive
		if rapid.Bool().Draw(t, "counter") {
			a, err := def.New(rapid.SampledFrom([]string{"c1", "team/c-2"}).Draw(t, "agent"), nil)
			if err != nil {
				t.Fatal(err)
			}
			_, ds = agents.Step(a, sig)
		}
		for range rapid.IntRange(0, 3).Draw(t, "more") {
			s := recordStrings.Draw(t, "s")
			ct := event.ApplicationJSON
			emitted := bus.Signal{Context: &event.EventContextV1{ID: s, Type: "t.x", DataContentType: &ct,
				Source: types.URIRef{URL: url.URL{Path: "/agent/" + s}}, Time: &types.Timestamp{Time: at},
				Extensions: map[string]any{"causationid": s}}, DataEncoded: []byte(`{"s":"<&>"}`)}
			ds = append(ds, rapid.SampledFrom([]agents.Directive{
				agents.Emit{Signal: emitted},
				agents.Emit{Signal: emitted, Dispatch: &agents.Dispatch{Adapter: "nats", Target: s}},
				agents.Error{Err: &bus.Error{Type: "x", Message: s}, Context: "action", Action: s},
				agents.Schedule{Delay: time.Second, Signal: emitted},
				agents.ScheduleCancel{SignalID: s},
				agents.RunInstruction{Instruction: agents.Instruction{Action: s, Params: json.RawMessage(` {"a" : 1} `)}},
				agents.SpawnAgent{Type: "t", Tag: s, Opts: map[string]any{"k": s}},
				agents.Stop{Reason: s},
			}).Draw(t, "directive"))
		}
		var carried []effectResult
		for range rapid.IntRange(0, 2).Draw(t, "effects") {
			carried = append(carried, effectResult{Version: rapid.Uint64().Draw(t, "v"), Index: rapid.IntRange(0, 9).Draw(t, "i"),
				Kind: recordStrings.Draw(t, "kind"), Outcome: OutcomeOK, Error: recordStrings.Draw(t, "err")})
		}
		version := rapid.Uint64().Draw(t, "version")
		count := len(ds)
		want, err := record(TypeCmd, "cmd:"+sig.Source()+"#"+sig.ID(), "", at, cmdRecord{
			Signal: sig.ID(), Version: version, Directives: oldEncodeAll(t, ds), Count: &count, Effects: carried,
		})
		if err != nil {
			t.Fatal(err)
		}
		got, err := cmdRecordOf(codec, &sig, version, at, ds, carried)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Data(), want.Data()) {
			t.Fatalf("data\n got %s\nwant %s", got.Data(), want.Data())
		}
		gj, _ := json.Marshal(got)
		wj, _ := json.Marshal(want)
		if !bytes.Equal(gj, wj) {
			t.Fatalf("event\n got %s\nwant %s", gj, wj)
		}
	})
}

// TestSignalSource: signalSource is the sdk's Source() for any source a
// signal may carry.
func TestSignalSource(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		src := rapid.OneOf(
			rapid.StringMatching(`[/a-zA-Z0-9._~:?#@%+ -]{0,12}`),
			rapid.SampledFrom([]string{"/agent/c", "bench", "//host/p", "a:b", "*", "./x", "/", "https://u@h:1/p?q#f"}),
		).Draw(t, "source")
		u, err := url.Parse(src)
		if err != nil {
			t.Skip()
		}
		sig := bus.Signal{Context: &event.EventContextV1{Source: types.URIRef{URL: *u}}}
		if got, want := signalSource(&sig), sig.Source(); got != want {
			t.Fatalf("%q: got %q, want %q", src, got, want)
		}
	})
}
