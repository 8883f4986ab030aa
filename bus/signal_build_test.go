package bus

import (
	"encoding/json"
	"fmt"
	"net/url"
	"reflect"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/cloudevents/sdk-go/v2/types"
	"pgregory.net/rapid"
)

var sourceSeeds = []string{
	"", "/", "/agent/c", "/agent/team-1/worker_2", "/a.b~c", "//host/x", "/a b", "/a%20b",
	"/a?b", "/a#b", "/a:b", "urn:example:x", "%zz", "agent/x", "/ä", "/a\x00", "http://x/y",
}

// FuzzParseSource: ParseSource keeps exactly what url.Parse gives, on its
// fast path and off it.
func FuzzParseSource(f *testing.F) {
	for _, s := range sourceSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := ParseSource(s)
		u, err := url.Parse(s)
		if (err != nil) != (got.Err() != nil) {
			t.Fatalf("ParseSource(%q): error %v, url.Parse: %v", s, got.Err(), err)
		}
		if err != nil {
			return
		}
		if !reflect.DeepEqual(got.ref.URL, *u) {
			t.Fatalf("ParseSource(%q) = %#v, url.Parse = %#v", s, got.ref.URL, *u)
		}
	})
}

// sdkFill is what FillSignal replaces: the sdk's clone and setters.
func sdkFill(sig Signal, f Fill, source string) Signal {
	s := sig.Clone()
	if s.ID() == "" && f.ID != "" {
		s.SetID(f.ID)
	}
	if f.Source.set && s.Source() == "" {
		s.SetSource(source)
	}
	if s.Time().IsZero() && !f.Time.IsZero() {
		s.SetTime(f.Time)
	}
	ext := s.Extensions()
	if _, ok := ext[ExtCausationID]; !ok && f.CausationID != "" {
		s.SetExtension(ExtCausationID, f.CausationID)
	}
	if _, ok := ext[ExtCorrelationID]; !ok && f.CorrelationID != "" {
		s.SetExtension(ExtCorrelationID, f.CorrelationID)
	}
	if _, ok := ext[ExtTraceParent]; !ok && f.TraceParent != "" {
		s.SetExtension(ExtTraceParent, f.TraceParent)
	}
	return s
}

// TestFillSignalMatchesSDK: for arbitrary signals and fills, FillSignal
// gives the signal the sdk's route gives, value for value, and shares no
// storage with its input that a setter could change; when it declines,
// the input is one it documents declining.
func TestFillSignalMatchesSDK(t *testing.T) {
	t0 := time.Date(2025, 1, 2, 3, 4, 5, 6, time.UTC)
	strs := []string{"", "x", " x ", "  ", "s1.0"}
	rapid.Check(t, func(t *rapid.T) {
		sig := event.New(SpecVersion)
		sig.SetType(rapid.SampledFrom([]string{"a.b", "", "bad type"}).Draw(t, "type"))
		if id := rapid.SampledFrom(strs).Draw(t, "id"); id != "" {
			sig.SetID(id)
		}
		if src := rapid.SampledFrom(sourceSeeds).Draw(t, "source"); src != "" {
			sig.SetSource(src)
		}
		switch rapid.IntRange(0, 2).Draw(t, "time") {
		case 1:
			sig.SetTime(t0.Add(time.Hour))
		case 2:
			sig.Context.(*event.EventContextV1).Time = &types.Timestamp{}
		}
		if rapid.Bool().Draw(t, "subject") {
			sig.SetSubject("subj")
		}
		if rapid.Bool().Draw(t, "dataschema") {
			sig.SetDataSchema("https://example.com/s.json")
		}
		for _, name := range rapid.SliceOfDistinct(rapid.SampledFrom([]string{ExtCausationID, ExtCorrelationID, ExtTraceParent, "n", "when", "bad-name"}), func(s string) string { return s }).Draw(t, "ext") {
			switch name {
			case "n":
				sig.SetExtension(name, 7)
			case "when":
				sig.SetExtension(name, t0)
			default:
				sig.SetExtension(name, "v")
			}
		}
		if rapid.Bool().Draw(t, "emptyext") && sig.Context.(*event.EventContextV1).Extensions == nil {
			sig.Context.(*event.EventContextV1).Extensions = map[string]any{}
		}
		switch rapid.IntRange(0, 2).Draw(t, "data") {
		case 1:
			sig.DataEncoded = []byte{}
		case 2:
			sig.DataEncoded = []byte(`{"a":1}`)
			sig.DataBase64 = rapid.Bool().Draw(t, "base64")
		}
		if rapid.Bool().Draw(t, "fielderrors") && sig.FieldErrors == nil {
			sig.FieldErrors = map[string]error{}
		}
		source := rapid.SampledFrom(sourceSeeds).Draw(t, "fillsource")
		f := Fill{
			ID:            rapid.SampledFrom(strs).Draw(t, "fillid"),
			CausationID:   rapid.SampledFrom(strs).Draw(t, "cause"),
			CorrelationID: rapid.SampledFrom(strs).Draw(t, "corr"),
			TraceParent:   rapid.SampledFrom(strs).Draw(t, "trace"),
		}
		if source != "" || rapid.Bool().Draw(t, "setemptysource") {
			f.Source = ParseSource(source)
		}
		if rapid.Bool().Draw(t, "filltime") {
			f.Time = t0
		}

		before := sig.Clone()
		want := sdkFill(sig, f, source)
		got, ok := FillSignal(sig, f)
		if !reflect.DeepEqual(sig, before) {
			t.Fatalf("FillSignal changed its input")
		}
		if !ok {
			if len(sig.FieldErrors) == 0 && len(want.FieldErrors) == 0 {
				t.Fatalf("FillSignal declined a signal the sdk fills without errors: %v with %+v", sig, f)
			}
			return
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("FillSignal differs from the sdk:\n got %#v\n     %#v\nwant %#v\n     %#v", got, got.Context, want, want.Context)
		}
		// Setters on the copy must not reach the input.
		got.SetExtension("later", "x")
		got.SetTime(t0.Add(2 * time.Hour))
		if len(got.DataEncoded) > 0 {
			got.DataEncoded[0] = 'X'
		}
		if !reflect.DeepEqual(sig, before) {
			t.Fatalf("changing FillSignal's result changed its input")
		}
	})
}

func BenchmarkFillSignal(b *testing.B) {
	sig := event.New(SpecVersion)
	sig.SetType("counter.changed")
	if err := SetJSONData(&sig, []byte(`{"count":2}`)); err != nil {
		b.Fatal(err)
	}
	t0 := time.Unix(1700000000, 0)
	b.Run("sdk", func(b *testing.B) {
		f := Fill{ID: "01J0000000000000000000000.0", Source: ParseSource("/agent/c"), Time: t0, CausationID: "01J0000000000000000000000"}
		b.ReportAllocs()
		for b.Loop() {
			_ = sdkFill(sig, f, "/agent/c")
		}
	})
	b.Run("FillSignal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			f := Fill{ID: "01J0000000000000000000000.0", Source: ParseSource("/agent/c"), Time: t0, CausationID: "01J0000000000000000000000"}
			if _, ok := FillSignal(sig, f); !ok {
				b.Fatal("declined")
			}
		}
	})
}

func TestHasSource(t *testing.T) {
	for _, src := range sourceSeeds {
		s := event.New(SpecVersion)
		s.SetSource(src)
		if got, want := HasSource(&s), s.Source() != ""; got != want {
			t.Errorf("HasSource(source %q) = %v, want %v", src, got, want)
		}
	}
	v03 := event.New("0.3")
	v03.SetSource("/x")
	if !HasSource(&v03) {
		t.Error("HasSource(0.3 signal with a source) = false")
	}
}

func TestNewJSONSignalMatchesSDK(t *testing.T) {
	for _, typ := range []string{"a.b", " a.b ", "", "bad type"} {
		for _, data := range []any{
			nil, json.RawMessage(`{"a":1}`), []byte(`[1, 2]`), json.RawMessage(`"s"`), json.RawMessage(nil),
			json.RawMessage{}, []byte(`{`), map[string]int{"n": 1}, "text", func() {}, (*int)(nil),
		} {
			want := event.New(SpecVersion)
			want.SetType(typ)
			wantErr := SetJSONData(&want, data)
			if wantErr != nil {
				want = Signal{}
			}
			got, err := NewJSONSignal(typ, data)
			if fmt.Sprint(err) != fmt.Sprint(wantErr) {
				t.Errorf("NewJSONSignal(%q, %#v): error %v, want %v", typ, data, err, wantErr)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("NewJSONSignal(%q, %#v) = %#v, want %#v", typ, data, got, want)
			}
		}
	}
}

// TestSourceStringIsSource: SourceString is what the sdk's getter returns,
// for sources in the shape it takes without the getter and for those it
// leaves to it.
func TestSourceStringIsSource(t *testing.T) {
	for _, src := range []string{
		"/agent/c1", "/agent/team-1/worker_2", "/a.b~c", "/", "/agent/a b", "/agent/%41", "/agent/ü",
		"//host/path", "jido-bus:runtime", "https://example.com/x?y#z", "nats:jido.agent.c1.t", "rel/path", "/p?q", "/p#f",
	} {
		s := event.New(SpecVersion)
		s.SetSource(src)
		if got, want := SourceString(&s), s.Source(); got != want {
			t.Errorf("SourceString of %q = %q, want %q", src, got, want)
		}
	}
	var none Signal
	if got := SourceString(&none); got != "" {
		t.Errorf("SourceString of a signal without context = %q", got)
	}
}
