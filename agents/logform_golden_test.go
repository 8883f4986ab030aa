package agents

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/cloudevents/sdk-go/v2/types"

	"github.com/jido-bus/jido-bus/bus"
)

var updateLogForm = flag.Bool("update-logform", false, "rewrite testdata/golden/logform.golden from the current output")

// oddStrings are strings every escaping rule touches: HTML characters
// (encoding/json escapes them, the sdk's jsoniter does not), quotes and
// backslashes, every control byte with a short escape and some without,
// DEL, U+2028 and U+2029 (escaped by encoding/json, also inside raw
// data), invalid and truncated UTF-8 (encoding/json writes U+FFFD, the
// sdk copies the bytes), multi-byte runes, and nothing at all.
var oddStrings = []string{
	"",
	"plain-id_01.x~",
	`<script>alert("x")</script> & more`,
	`quote " backslash \ slash /`,
	"ctl \x00\x01\b\f\n\r\t\x1b\x1f del \x7f",
	"sep \u2028 para \u2029 end",
	"bad \xff\xfe utf8 \xe2\x80 cut \xe2",
	"\xe2\x80\xa8",
	"é ünï 日本 🙂",
	" padded ",
}

// oddData are signal data: compact and spaced JSON, HTML characters and
// line separators in strings, escapes, and what is not JSON at all.
var oddData = [][]byte{
	nil,
	[]byte(`{"count":3}`),
	[]byte(" { \"a\" : [ 1 , 2.5e3 , { \"b\" : \"<&>\" } ] ,\n\t\"c\" : \"\u2028 x \u2029\" , \"d\":\"q\\\"\\\\ \\u003c\" } "),
	[]byte(`"just a string with <html> & \u2028"`),
	[]byte(`[true,false,null,-0.5e-7]`),
	[]byte("{\"bad\":\"\xff\xfe\"}"),
	[]byte(`{"a":`),
	[]byte(``),
	[]byte(`plain text`),
}

// logFormCases returns directives of every built-in kind and shape the
// log form has, with the strings and data above in every string field.
func logFormCases() []Directive {
	t0 := time.Date(2025, 1, 2, 3, 4, 5, 600_000_000, time.UTC)
	east := time.FixedZone("east", 5*3600+1800)
	var out []Directive
	sig := func(id, src, typ string, data []byte) bus.Signal {
		ct := event.ApplicationJSON
		ec := &event.EventContextV1{ID: id, Type: typ, DataContentType: &ct, Time: &types.Timestamp{Time: t0},
			Source:     types.URIRef{URL: url.URL{Path: src}},
			Extensions: map[string]any{"causationid": id, "correlationid": "conv-1"}}
		return bus.Signal{Context: ec, DataEncoded: data}
	}
	for _, s := range oddStrings {
		out = append(out,
			Emit{Signal: sig(s, "/agent/c", "t.x", []byte(`{"count":1}`))},
			Emit{Signal: sig("i", s, "t.x", nil)},
			Emit{Signal: sig("i", "/agent/c", s, nil)},
			Emit{Signal: sig("i", "/agent/c", "t.x", nil), Dispatch: &Dispatch{Adapter: s, Target: s, Options: map[string]string{s: s, "b": "2", "a": s}}},
			Error{Err: &bus.Error{Type: s, Message: s}, Context: s, Action: s},
			Error{Err: &bus.Error{Type: "t", Message: s}, Context: "c", Refused: true},
			Schedule{Delay: 1500 * time.Millisecond, Signal: sig(s, "/agent/s", "t.s", nil)},
			ScheduleCancel{SignalID: s},
			Cron{JobID: s, Expr: s, TZ: s},
			Cron{JobID: "j", Expr: "* * * * *", Signal: new(sig("c", "/agent/c", "t.c", []byte(`{}`)))},
			CronCancel{JobID: s},
			RunInstruction{Instruction: Instruction{Action: s, Origin: Origin{ID: s, Source: s, Type: s, CorrelationID: s, TraceParent: s}}, ResultAction: s},
			SpawnAgent{Type: s, Tag: s, Restart: s},
			StopChild{Tag: s, Reason: s},
			Stop{Reason: s},
		)
		// An odd subject, content type and extension.
		e := sig("i", "/agent/c", "t.x", nil)
		ec := e.Context.(*event.EventContextV1)
		ec.Subject = &s
		ec.Extensions["zz"+"odd"] = s
		out = append(out, Emit{Signal: e})
	}
	for _, d := range oddData {
		out = append(out,
			Emit{Signal: sig("d", "/agent/c", "t.d", d)},
			RunInstruction{Instruction: Instruction{Action: "a", Params: d}},
		)
		for _, ct := range []string{"text/plain", "application/json; charset=utf-8", "text/json", "application/cloudevents+json"} {
			e := sig("d", "/agent/c", "t.d", d)
			e.Context.(*event.EventContextV1).DataContentType = &ct
			out = append(out, Emit{Signal: e})
		}
		e := sig("d", "/agent/c", "t.d", d)
		e.Context.(*event.EventContextV1).DataContentType = nil
		out = append(out, Emit{Signal: e})
		e = sig("d", "/agent/c", "t.d", d)
		e.DataBase64 = true
		out = append(out, Emit{Signal: e})
	}
	// Sources that are more than a plain path.
	for _, src := range []string{"bench", "/agent/team-1/worker_2", "//host/p", "a:b", "https://u:p@example.com:8080/a b/%2F?x=1&y#frag", "urn:jido:x", "/a/b?q", "*", "./x"} {
		e := sig("i", "/", "t.x", nil)
		u, err := url.Parse(src)
		if err != nil {
			panic(err)
		}
		e.Context.(*event.EventContextV1).Source = types.URIRef{URL: *u}
		out = append(out, Emit{Signal: e})
	}
	// Times, extensions, context shapes.
	for _, at := range []time.Time{t0.In(east), time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(10000, 1, 1, 0, 0, 0, 1, time.UTC), time.Unix(1700000000, 123)} {
		e := sig("i", "/agent/c", "t.x", nil)
		e.Context.(*event.EventContextV1).Time = &types.Timestamp{Time: at}
		out = append(out, Emit{Signal: e})
		out = append(out, RunInstruction{Instruction: Instruction{Action: "a", Origin: Origin{Time: at}}})
	}
	noTime := sig("i", "/agent/c", "t.x", nil)
	noTime.Context.(*event.EventContextV1).Time = nil
	noExt := sig("i", "/agent/c", "t.x", nil)
	noExt.Context.(*event.EventContextV1).Extensions = nil
	intExt := sig("i", "/agent/c", "t.x", nil)
	intExt.Context.(*event.EventContextV1).Extensions["n"] = int32(7)
	manyExt := sig("i", "/agent/c", "t.x", nil)
	for i := range 9 {
		manyExt.Context.(*event.EventContextV1).Extensions[fmt.Sprintf("x%d", 9-i)] = "v"
	}
	schema := sig("i", "/agent/c", "t.x", nil)
	schema.Context.(*event.EventContextV1).DataSchema = &types.URI{URL: url.URL{Scheme: "https", Host: "s.example", Path: "/v1"}}
	v03 := bus.Signal{Context: &event.EventContextV03{ID: "i", Type: "t.x", Source: types.URIRef{URL: url.URL{Path: "/agent/c"}}}}
	sdkBuilt := event.New()
	sdkBuilt.SetID("i")
	sdkBuilt.SetSource("/agent/c")
	sdkBuilt.SetType("t.x")
	sdkBuilt.SetExtension("n", 7)
	sdkBuilt.SetExtension("b", true)
	out = append(out,
		Emit{Signal: noTime}, Emit{Signal: noExt}, Emit{Signal: intExt}, Emit{Signal: manyExt},
		Emit{Signal: schema}, Emit{Signal: v03}, Emit{Signal: sdkBuilt}, Emit{},
		&Emit{Signal: sig("p", "/agent/c", "t.p", []byte(`{}`))},
		Emit{Signal: sig("i", "/agent/c", "t.x", nil), Dispatch: &Dispatch{Adapter: "nats"}},
		Emit{Signal: sig("i", "/agent/c", "t.x", nil), Dispatch: &Dispatch{Adapter: "nats", Options: map[string]string{}}},
		Error{Context: "nil error"},
		Error{},
		Schedule{Delay: -time.Millisecond, Signal: sig("s", "/agent/c", "t.s", nil), Message: "ignored"},
		Schedule{Delay: 0},
		Schedule{Delay: time.Hour, Message: map[string]any{"x": 1}},
		Cron{},
		Cron{JobID: "j", Signal: &bus.Signal{}},
		RunInstruction{},
		RunInstruction{Instruction: Instruction{Action: "a", Params: json.RawMessage(`{"by":1}`), Origin: Origin{ID: "o", Time: t0, CorrelationID: "c"}}, ResultAction: "r"},
		RunInstruction{Instruction: Instruction{Action: "a", Origin: Origin{Time: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}}},
		SpawnAgent{Type: "probe", Tag: "p1", Opts: map[string]any{"initial_state": map[string]any{"n": 1.0}}, Meta: map[string]any{"<k>": "&"}},
		SpawnAgent{Type: "probe", Tag: "p1", Opts: map[string]any{}},
		SpawnAgent{},
		StopChild{},
		Stop{},
		&Stop{Reason: "by pointer"},
		UnknownDirective{Kind: "future_kind", Raw: json.RawMessage(`{ "kind" : "future_kind", "x" : "<y>" }`)},
	)
	return out
}

// logFormLines encodes each case with c, one line each: the log form, or
// the error.
func logFormLines(t *testing.T, c *DirectiveCodec) []byte {
	t.Helper()
	var out bytes.Buffer
	for i, d := range logFormCases() {
		b, err := c.Encode(d)
		if err != nil {
			fmt.Fprintf(&out, "%d %T error: %v\n", i, d, err)
			continue
		}
		fmt.Fprintf(&out, "%d %T %s\n", i, d, b)
	}
	all, err := c.EncodeAll(logFormCases())
	fmt.Fprintf(&out, "all: %s %v\n", all, err)
	return out.Bytes()
}

// TestLogFormGolden: the log form of every case is what encoding/json
// wrote before the directives were encoded by hand — the file was written
// by that code (Encode through json.Marshal, commit 54c9658), and the log
// holds these bytes. Regenerate only for an intended format change, with
// -update-logform.
func TestLogFormGolden(t *testing.T) {
	got := logFormLines(t, NewDirectiveCodec())
	path := filepath.Join("testdata", "golden", "logform.golden")
	if *updateLogForm {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		gl, wl := bytes.Split(got, []byte("\n")), bytes.Split(want, []byte("\n"))
		for i := range min(len(gl), len(wl)) {
			if !bytes.Equal(gl[i], wl[i]) {
				t.Fatalf("line %d:\n got %q\nwant %q", i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("got %d lines, want %d", len(gl), len(wl))
	}
}
