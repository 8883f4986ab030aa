package agents

import (
	"bytes"
	"encoding/json"
	"net/url"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/cloudevents/sdk-go/v2/types"
	"pgregory.net/rapid"

	"github.com/jido-bus/jido-bus/bus"
)

// sameLogForm fails t unless Encode writes for d exactly what encoding/json
// writes (encodeJSON, the path every directive took before), error for
// error, and, where appendLogForm takes d, that it appends those bytes
// after what b already held.
func sameLogForm(t interface {
	Helper()
	Fatalf(string, ...any)
}, c *DirectiveCodec, d Directive) {
	t.Helper()
	want, wantErr := c.encodeJSON(d)
	got, err := c.Encode(d)
	if (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error() {
		t.Fatalf("%#v: Encode error %v, encoding/json %v", d, err, wantErr)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%#v:\n got %s\nwant %s", d, got, want)
	}
	prefix := []byte("[0,")
	fast, ok := appendLogForm(prefix, d)
	if !ok {
		return
	}
	if wantErr != nil {
		t.Fatalf("%#v: appendLogForm wrote %s where encoding/json fails: %v", d, fast, wantErr)
	}
	if !bytes.Equal(fast[:len(prefix)], prefix) || !bytes.Equal(fast[len(prefix):], want) {
		t.Fatalf("%#v: appendLogForm\n got %s\nwant %s%s", d, fast, prefix, want)
	}
}

// TestAppendLogForm: every case of the golden file, encoded by hand, is
// what encoding/json writes; and the directives every decision carries
// are encoded by hand (else the speed-up would silently be gone).
func TestAppendLogForm(t *testing.T) {
	c := NewDirectiveCodec()
	handled := map[string]int{}
	for _, d := range logFormCases() {
		sameLogForm(t, c, d)
		if _, ok := appendLogForm(nil, d); ok {
			handled[d.DirectiveKind()]++
		}
	}
	for _, kind := range []string{KindEmit, KindError, KindSchedule, KindScheduleCancel, KindCron, KindCronCancel, KindRunInstruction, KindSpawnAgent, KindStopChild, KindStop} {
		if handled[kind] == 0 {
			t.Errorf("no %s directive was encoded by hand", kind)
		}
	}
	// The counter's Emit as Cmd completes it.
	a, err := MustDefine(Spec{Name: "e", Actions: []Action{{Name: "go", Run: func(Env, json.RawMessage) (Result, error) {
		e, err := NewEmit("counter.changed", json.RawMessage(`{"count":3}`))
		return Result{Directives: []Directive{e}}, err
	}}}}).New("c", nil)
	if err != nil {
		t.Fatal(err)
	}
	_, dirs := Cmd(a, Instruction{Action: "go", Origin: Origin{ID: "01J", Source: "bench", Time: time.Unix(1700000000, 0), CorrelationID: "k"}})
	if _, ok := appendLogForm(nil, dirs[0]); !ok {
		t.Fatalf("the Emit Cmd completes is not encoded by hand: %#v", dirs[0])
	}
	sameLogForm(t, c, dirs[0])
	// A codec without the built-ins registered refuses them, as before.
	var bare DirectiveCodec
	if _, err := bare.Encode(dirs[0]); err == nil {
		t.Fatal("a codec without the emit kind encoded an Emit")
	}
}

// drawString draws strings of every kind: the odd ones, any runes, and
// any bytes (invalid UTF-8 included).
var drawString = rapid.OneOf(
	rapid.SampledFrom(oddStrings),
	rapid.String(),
	rapid.Map(rapid.SliceOf(rapid.Byte()), func(b []byte) string { return string(b) }),
	rapid.StringOf(rapid.SampledFrom([]rune{'<', '>', '&', '"', '\\', '\u2028', '\u2029', '\n', 0, 0x7f, 'é', 'a', ' '})),
)

// drawJSON draws JSON texts: values encoding/json writes with and without
// HTML escaping and indentation, strings of raw bytes, and broken ones.
var drawJSON = rapid.Custom(func(t *rapid.T) []byte {
	switch rapid.IntRange(0, 3).Draw(t, "how") {
	case 0:
		return rapid.SampledFrom(oddData).Draw(t, "odd")
	case 1:
		s := rapid.SliceOf(rapid.Byte().Filter(func(b byte) bool { return b >= 0x20 && b != '"' && b != '\\' })).Draw(t, "raw")
		return append(append([]byte{'"'}, s...), '"')
	case 2:
		return []byte(drawString.Draw(t, "text"))
	}
	v := map[string]any{
		drawString.Draw(t, "k1"): drawString.Draw(t, "v1"),
		"n":                      rapid.Float64().Draw(t, "n"),
		"a":                      []any{drawString.Draw(t, "v2"), true, nil},
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(rapid.Bool().Draw(t, "html"))
	enc.SetIndent(rapid.SampledFrom([]string{"", " ", "\t"}).Draw(t, "prefix"), rapid.SampledFrom([]string{"", "  ", "\n"}).Draw(t, "indent"))
	if enc.Encode(v) != nil {
		return []byte(`{}`)
	}
	return buf.Bytes()
})

func drawSignal(t *rapid.T) bus.Signal {
	ec := &event.EventContextV1{
		ID: drawString.Draw(t, "id"), Type: drawString.Draw(t, "type"),
		Source: types.URIRef{URL: url.URL{Path: drawString.Draw(t, "source")}},
	}
	if rapid.Bool().Draw(t, "subject") {
		ec.Subject = new(drawString.Draw(t, "subj"))
	}
	if rapid.Bool().Draw(t, "ct") {
		ec.DataContentType = new(rapid.SampledFrom([]string{event.ApplicationJSON, "text/plain", "text/json", ""}).Draw(t, "ctv"))
	}
	if rapid.Bool().Draw(t, "time") {
		ec.Time = &types.Timestamp{Time: time.Unix(rapid.Int64Range(-1e11, 1e12).Draw(t, "sec"), rapid.Int64Range(0, 1e9-1).Draw(t, "ns")).In(time.FixedZone("z", rapid.IntRange(-50000, 50000).Draw(t, "zone")))}
	}
	for range rapid.IntRange(0, 10).Draw(t, "exts") {
		if ec.Extensions == nil {
			ec.Extensions = map[string]any{}
		}
		ec.Extensions[drawString.Draw(t, "ext")] = drawString.Draw(t, "extv")
	}
	s := bus.Signal{Context: ec}
	if rapid.Bool().Draw(t, "data") {
		s.DataEncoded = drawJSON.Draw(t, "d")
		s.DataBase64 = rapid.IntRange(0, 9).Draw(t, "b64") == 0
	}
	return s
}

// TestAppendLogFormProperty: for directives of every kind drawn at random,
// Encode writes what encoding/json writes.
func TestAppendLogFormProperty(t *testing.T) {
	c := NewDirectiveCodec()
	rapid.Check(t, func(t *rapid.T) {
		s := drawString.Draw(t, "s")
		var d Directive
		switch rapid.IntRange(0, 9).Draw(t, "kind") {
		case 0:
			e := Emit{Signal: drawSignal(t)}
			if rapid.Bool().Draw(t, "dispatch") {
				e.Dispatch = &Dispatch{Adapter: s, Target: drawString.Draw(t, "target"), Options: rapid.MapOf(drawString, drawString).Draw(t, "options")}
			}
			d = e
		case 1:
			d = Error{Err: &bus.Error{Type: s, Message: drawString.Draw(t, "msg")}, Context: drawString.Draw(t, "ctx"), Action: drawString.Draw(t, "action")}
		case 2:
			d = Schedule{Delay: time.Duration(rapid.Int64().Draw(t, "delay")), Signal: drawSignal(t)}
		case 3:
			d = ScheduleCancel{SignalID: s}
		case 4:
			cr := Cron{JobID: s, Expr: drawString.Draw(t, "expr"), TZ: drawString.Draw(t, "tz")}
			if rapid.Bool().Draw(t, "sig") {
				cr.Signal = new(drawSignal(t))
			}
			d = cr
		case 5:
			d = CronCancel{JobID: s}
		case 6:
			in := Instruction{Action: s, Origin: Origin{ID: drawString.Draw(t, "oid"), CorrelationID: drawString.Draw(t, "corr")}}
			if rapid.Bool().Draw(t, "params") {
				in.Params = drawJSON.Draw(t, "p")
			}
			if rapid.Bool().Draw(t, "otime") {
				in.Origin.Time = time.Unix(rapid.Int64Range(-1e11, 1e12).Draw(t, "osec"), rapid.Int64Range(0, 1e9-1).Draw(t, "ons"))
			}
			d = RunInstruction{Instruction: in, ResultAction: drawString.Draw(t, "ra")}
		case 7:
			d = SpawnAgent{Type: s, Tag: drawString.Draw(t, "tag"), Restart: drawString.Draw(t, "restart")}
		case 8:
			d = StopChild{Tag: s, Reason: drawString.Draw(t, "reason")}
		default:
			d = Stop{Reason: s}
		}
		sameLogForm(t, c, d)
	})
}

// FuzzAppendLogForm puts fuzzed text in every string of the directives
// and fuzzed bytes in their data and params.
func FuzzAppendLogForm(f *testing.F) {
	for _, s := range oddStrings {
		f.Add(s, []byte(`{"count":1}`))
	}
	for _, d := range oddData {
		f.Add("x", d)
	}
	c := NewDirectiveCodec()
	f.Fuzz(func(t *testing.T, s string, data []byte) {
		ct := event.ApplicationJSON
		sig := bus.Signal{Context: &event.EventContextV1{ID: s, Type: s, Subject: &s, DataContentType: &ct,
			Source: types.URIRef{URL: url.URL{Path: s}}, Extensions: map[string]any{s: s, "causationid": s}}, DataEncoded: data}
		for _, d := range []Directive{
			Emit{Signal: sig, Dispatch: &Dispatch{Adapter: s, Target: s, Options: map[string]string{s: s, "k": s}}},
			Error{Err: &bus.Error{Type: s, Message: s}, Context: s, Action: s},
			Schedule{Delay: time.Duration(len(s)) * time.Millisecond, Signal: sig},
			Cron{JobID: s, Expr: s, Signal: &sig, TZ: s},
			RunInstruction{Instruction: Instruction{Action: s, Params: data, Origin: Origin{ID: s, Source: s, Type: s, CorrelationID: s, TraceParent: s}}, ResultAction: s},
			SpawnAgent{Type: s, Tag: s, Restart: s},
			StopChild{Tag: s, Reason: s},
			Stop{Reason: s},
		} {
			sameLogForm(t, c, d)
		}
	})
}

// BenchmarkEncodeEmit encodes the Emit a counter step returns, as Cmd
// completes it, both ways in the same run: by hand (AppendAll) and through
// encoding/json (encodeJSON, the path every directive took before).
func BenchmarkEncodeEmit(b *testing.B) {
	a, err := MustDefine(Spec{Name: "e", Actions: []Action{{Name: "go", Run: func(Env, json.RawMessage) (Result, error) {
		e, err := NewEmit("counter.changed", json.RawMessage(`{"count":3}`))
		return Result{Directives: []Directive{e}}, err
	}}}}).New("c17", nil)
	if err != nil {
		b.Fatal(err)
	}
	_, dirs := Cmd(a, Instruction{Action: "go", Origin: Origin{ID: "01KB2Y8Q7J3M6ZV0R5T9XW4HCN-17", Source: "bench", Time: time.Unix(1700000000, 0)}})
	c := NewDirectiveCodec()
	b.Run("by_hand", func(b *testing.B) {
		var buf []byte
		b.ReportAllocs()
		for b.Loop() {
			// Into a buffer used again, as the runtime writes a cmd record.
			if buf, err = c.AppendAll(buf[:0], dirs); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding_json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := c.encodeJSON(dirs[0]); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkEncodeJSONPath encodes a directive appendLogForm leaves to
// encoding/json (a SpawnAgent with options) into a reused buffer.
func BenchmarkEncodeJSONPath(b *testing.B) {
	c := NewDirectiveCodec()
	dirs := []Directive{SpawnAgent{Type: "probe", Tag: "p1", Opts: map[string]any{"initial_state": map[string]any{"n": 1.0}}}}
	var buf []byte
	var err error
	b.ReportAllocs()
	for b.Loop() {
		if buf, err = c.AppendAll(buf[:0], dirs); err != nil {
			b.Fatal(err)
		}
	}
}
