package codec

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/bus"
)

var fixedTime = time.Date(2026, 11, 22, 10, 30, 0, 123456789, time.UTC)

func testDecoder() *Decoder {
	return &Decoder{NewID: func() string { return "01PLAINID" }, Now: func() time.Time { return fixedTime }}
}

func sampleSignal(t testing.TB) bus.Signal {
	t.Helper()
	s := event.New(bus.SpecVersion)
	s.SetID("evt-1")
	s.SetSource("https://example.com/svc")
	s.SetType("counter.increment")
	s.SetSubject("counters/c1 ünïcode")
	s.SetTime(fixedTime)
	s.SetDataSchema("https://example.com/schemas/increment.json")
	s.SetExtension(bus.ExtCausationID, "cause-1")
	s.SetExtension("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	if err := bus.SetJSONData(&s, map[string]int{"by": 2}); err != nil {
		t.Fatal(err)
	}
	return s
}

// equalSignals compares the parts of two signals a reader sees.
func equalSignals(t *testing.T, got, want bus.Signal) {
	t.Helper()
	type view struct {
		ID, Source, Type, Subject, Schema, ContentType, Data string
		Time                                                 time.Time
		Ext                                                  map[string]any
	}
	v := func(s bus.Signal) view {
		ext := map[string]any{}
		for k, x := range s.Extensions() {
			ext[k] = x
		}
		return view{s.ID(), s.Source(), s.Type(), s.Subject(), s.DataSchema(), s.DataContentType(), string(s.Data()), s.Time(), ext}
	}
	if diff := cmp.Diff(v(want), v(got)); diff != "" {
		t.Fatalf("signal differs (-want +got):\n%s", diff)
	}
}

func TestRoundTrip(t *testing.T) {
	for _, mode := range []Mode{Binary, Structured} {
		t.Run(mode.String(), func(t *testing.T) {
			want := sampleSignal(t)
			msg, err := Encode("jido.agent.c1.counter.increment", &want, mode)
			if err != nil {
				t.Fatal(err)
			}
			got, gotMode, err := testDecoder().Decode(msg, "counter.increment")
			if err != nil {
				t.Fatal(err)
			}
			if gotMode != mode {
				t.Fatalf("mode = %v, want %v", gotMode, mode)
			}
			equalSignals(t, got, want)
		})
	}
}

func TestBinaryHeaders(t *testing.T) {
	s := sampleSignal(t)
	s.SetDataContentType("application/json; charset=utf-8")
	msg, err := Encode("x", &s, Binary)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"ce-specversion":     "1.0",
		"ce-id":              "evt-1",
		"ce-source":          "https://example.com/svc",
		"ce-type":            "counter.increment",
		"ce-subject":         "counters/c1%20%C3%BCn%C3%AFcode",
		"ce-datacontenttype": "application/json;%20charset=utf-8", // the binding's encoding
		"content-type":       "application/json; charset=utf-8",   // a plain header
		"ce-causationid":     "cause-1",
		"ce-time":            "2026-11-22T10:30:00.123456789Z",
		"ce-dataschema":      "https://example.com/schemas/increment.json",
		"ce-traceparent":     "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
	}
	for k, v := range want {
		if got := msg.Header.Values(k); len(got) != 1 || got[0] != v {
			t.Errorf("header %s = %q, want [%q]", k, got, v)
		}
	}
	if len(msg.Header) != len(want) {
		t.Errorf("headers %v, want only %v", msg.Header, want)
	}
	// Each value is its own: adding to one header leaves the others.
	msg.Header.Add("ce-id", "second")
	if got := msg.Header.Values("ce-source"); len(got) != 1 || got[0] != want["ce-source"] {
		t.Errorf("ce-source after adding to ce-id: %q", got)
	}
	if string(msg.Data) != `{"by":2}` {
		t.Errorf("body = %s", msg.Data)
	}
}

func TestDecodeLenient(t *testing.T) {
	cases := []struct {
		name    string
		msg     *nats.Msg
		subject string
		check   func(t *testing.T, s bus.Signal)
	}{
		{
			name:    "plain JSON body",
			msg:     &nats.Msg{Subject: "jido.agent.c1.counter.increment", Data: []byte(`{"by":2}`)},
			subject: "counter.increment",
			check: func(t *testing.T, s bus.Signal) {
				if s.ID() != "01PLAINID" || s.Type() != "counter.increment" || s.Source() != "nats:jido.agent.c1.counter.increment" || !s.Time().Equal(fixedTime) {
					t.Fatalf("plain attributes: %v", s)
				}
				if s.DataContentType() != "application/json" || string(s.Data()) != `{"by":2}` {
					t.Fatalf("plain data: %s %s", s.DataContentType(), s.Data())
				}
			},
		},
		{
			name:    "plain text body",
			msg:     &nats.Msg{Subject: "s", Data: []byte(`hello`)},
			subject: "greeting",
			check: func(t *testing.T, s bus.Signal) {
				if s.DataContentType() != "text/plain" || string(s.Data()) != "hello" {
					t.Fatalf("got %s %q", s.DataContentType(), s.Data())
				}
			},
		},
		{
			name:    "plain empty body",
			msg:     &nats.Msg{Subject: "s"},
			subject: "counter.reset",
			check: func(t *testing.T, s bus.Signal) {
				if s.Data() != nil || s.DataContentType() != "" {
					t.Fatalf("empty body gave data %q (%s)", s.Data(), s.DataContentType())
				}
			},
		},
		{
			name: "header names in any case, content-type header",
			msg: &nats.Msg{Subject: "s", Data: []byte(`{}`), Header: nats.Header{
				"Ce-Specversion": {"1.0"}, "CE-ID": {"a"}, "Ce-Source": {"src"}, "ce-Type": {"t.x"}, "Content-Type": {"application/json"},
			}},
			subject: "t.x",
			check: func(t *testing.T, s bus.Signal) {
				if s.ID() != "a" || s.Source() != "src" || s.DataContentType() != "application/json" {
					t.Fatalf("got %v", s)
				}
			},
		},
		{
			name:    "binary 1.0.2 normalised",
			msg:     &nats.Msg{Subject: "s", Header: nats.Header{"ce-specversion": {"1.0.2"}, "ce-id": {"a"}, "ce-source": {"b"}, "ce-type": {"t"}}},
			subject: "t",
			check: func(t *testing.T, s bus.Signal) {
				if s.SpecVersion() != "1.0" {
					t.Fatalf("specversion %q", s.SpecVersion())
				}
			},
		},
		{
			name:    "binary without ce-type takes the subject's",
			msg:     &nats.Msg{Subject: "s", Header: nats.Header{"ce-specversion": {"1.0"}, "ce-id": {"a"}, "ce-source": {"b"}}},
			subject: "from.subject",
			check: func(t *testing.T, s bus.Signal) {
				if s.Type() != "from.subject" {
					t.Fatalf("type %q", s.Type())
				}
			},
		},
		{
			name: "structured 1.0.2 normalised",
			msg: &nats.Msg{Subject: "s", Header: nats.Header{"Content-Type": {"application/cloudevents+json; charset=utf-8"}},
				Data: []byte(`{"specversion":"1.0.2","id":"a","source":"b","type":"t","data":{"specversion":"kept"}}`)},
			subject: "t",
			check: func(t *testing.T, s bus.Signal) {
				if s.SpecVersion() != "1.0" || !strings.Contains(string(s.Data()), `"kept"`) {
					t.Fatalf("got %s / %s", s.SpecVersion(), s.Data())
				}
			},
		},
		{
			name:    "a literal percent from a writer that does not encode survives",
			msg:     &nats.Msg{Subject: "s", Header: nats.Header{"ce-specversion": {"1.0"}, "ce-id": {"100%"}, "ce-source": {"b"}, "ce-type": {"t"}, "ce-subject": {"50%zz"}}},
			subject: "t",
			check: func(t *testing.T, s bus.Signal) {
				if s.ID() != "100%" || s.Subject() != "50%zz" {
					t.Fatalf("got id %q source %q", s.ID(), s.Source())
				}
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, _, err := testDecoder().Decode(c.msg, c.subject)
			if err != nil {
				t.Fatal(err)
			}
			c.check(t, s)
		})
	}
}

func binaryHeader(kv ...string) nats.Header {
	h := nats.Header{}
	for i := 0; i < len(kv); i += 2 {
		h.Set(kv[i], kv[i+1])
	}
	return h
}

func TestDecodeRejects(t *testing.T) {
	complete := []string{"ce-specversion", "1.0", "ce-id", "a", "ce-source", "b", "ce-type", "t"}
	without := func(name string) nats.Header {
		h := binaryHeader(complete...)
		delete(h, name)
		return h
	}
	with := func(name, value string) nats.Header {
		h := binaryHeader(complete...)
		h.Set(name, value)
		return h
	}
	structured := nats.Header{"content-type": {ContentTypeStructured}}
	cases := []struct {
		name    string
		msg     *nats.Msg
		subject string
		lim     bus.Limits
		want    string
		mention string
	}{
		{"no ce-id", &nats.Msg{Header: without("ce-id")}, "t", bus.Limits{}, bus.ReasonMissingAttribute, "ce-id"},
		{"no ce-source", &nats.Msg{Header: without("ce-source")}, "t", bus.Limits{}, bus.ReasonMissingAttribute, "ce-source"},
		{"no ce-specversion", &nats.Msg{Header: without("ce-specversion")}, "t", bus.Limits{}, bus.ReasonMissingAttribute, "ce-specversion"},
		{"specversion 0.3", &nats.Msg{Header: with("ce-specversion", "0.3")}, "t", bus.Limits{}, bus.ReasonInvalidSpecVersion, "0.3"},
		{"specversion 2.0", &nats.Msg{Header: with("ce-specversion", "2.0")}, "t", bus.Limits{}, bus.ReasonInvalidSpecVersion, "2.0"},
		{"invalid type", &nats.Msg{Header: with("ce-type", "a..b")}, "", bus.Limits{}, bus.ReasonInvalidType, "a..b"},
		{"type disagrees with subject", &nats.Msg{Header: with("ce-type", "other")}, "t", bus.Limits{}, bus.ReasonTypeMismatch, "other"},
		{"bad time", &nats.Msg{Header: with("ce-time", "yesterday")}, "t", bus.Limits{}, bus.ReasonInvalidAttribute, "time"},
		{"bad extension name", &nats.Msg{Header: with("ce-bad_name", "x")}, "t", bus.Limits{}, bus.ReasonInvalidAttribute, "ce-bad_name"},
		{"binary data too large", &nats.Msg{Header: binaryHeader(complete...), Data: make([]byte, 11)}, "t", bus.Limits{MaxDataBytes: 10}, bus.ReasonTooLarge, "limit"},
		{"plain data too large", &nats.Msg{Data: make([]byte, 11)}, "t", bus.Limits{MaxDataBytes: 10}, bus.ReasonTooLarge, "limit"},
		{"plain without a type", &nats.Msg{Data: []byte("x")}, "", bus.Limits{}, bus.ReasonMissingAttribute, "type"},
		{"malformed structured", &nats.Msg{Header: structured, Data: []byte(`{"specversion":"1.0","id":`)}, "t", bus.Limits{}, bus.ReasonMalformed, "JSON"},
		{"structured not an object", &nats.Msg{Header: structured, Data: []byte(`[1,2]`)}, "t", bus.Limits{}, bus.ReasonMissingAttribute, "specversion"},
		{"structured without specversion", &nats.Msg{Header: structured, Data: []byte(`{"id":"a","source":"b","type":"t"}`)}, "t", bus.Limits{}, bus.ReasonMissingAttribute, "specversion"},
		{"structured specversion 0.2", &nats.Msg{Header: structured, Data: []byte(`{"specversion":"0.2","id":"a","source":"b","type":"t"}`)}, "t", bus.Limits{}, bus.ReasonInvalidSpecVersion, "0.2"},
		{"structured specversion 0.3", &nats.Msg{Header: structured, Data: []byte(`{"specversion":"0.3","id":"a","source":"b","type":"t"}`)}, "t", bus.Limits{}, bus.ReasonInvalidSpecVersion, "0.3"},
		{"structured type mismatch", &nats.Msg{Header: structured, Data: []byte(`{"specversion":"1.0","id":"a","source":"b","type":"x"}`)}, "t", bus.Limits{}, bus.ReasonTypeMismatch, `"x"`},
		{"structured without id", &nats.Msg{Header: structured, Data: []byte(`{"specversion":"1.0","source":"b","type":"t"}`)}, "t", bus.Limits{}, bus.ReasonMissingAttribute, "id"},
		{"source not a URI reference", &nats.Msg{Header: with("ce-source", "b%zz")}, "t", bus.Limits{}, bus.ReasonInvalidAttribute, "ce-source"},
		{"structured data too large", &nats.Msg{Header: structured, Data: []byte(`{"specversion":"1.0","id":"a","source":"b","type":"t","data":"` + strings.Repeat("x", 20) + `"}`)}, "t", bus.Limits{MaxDataBytes: 10}, bus.ReasonTooLarge, "limit"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := testDecoder()
			d.Limits = c.lim
			_, _, err := d.Decode(c.msg, c.subject)
			if err == nil {
				t.Fatalf("Decode accepted it")
			}
			if bus.ErrorType(err) != c.want || !strings.Contains(err.Error(), c.mention) {
				t.Fatalf("Decode = %v, want %s mentioning %q", err, c.want, c.mention)
			}
		})
	}
}

func TestPercentEncoding(t *testing.T) {
	for _, v := range []string{"", "plain", "a b", `q"uote`, "100%", "ü", "\x00\x1f\x7f", "%41"} {
		enc := percentEncode(v)
		for i := 0; i < len(enc); i++ {
			if needsPercent(enc[i]) && enc[i] != '%' {
				t.Errorf("percentEncode(%q) = %q keeps byte %q", v, enc, enc[i])
			}
		}
		if dec := percentDecode(enc); dec != v {
			t.Errorf("percentDecode(percentEncode(%q)) = %q", v, dec)
		}
	}
	if !bytes.Equal([]byte(percentDecode("%4")), []byte("%4")) {
		t.Error("a short escape was not kept")
	}
}
