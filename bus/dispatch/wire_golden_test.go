package dispatch

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/cloudevents/sdk-go/v2/types"
	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/bus"
)

var updateWire = flag.Bool("update-wire", false, "rewrite testdata/wire.golden from the current output")

// TestNATSDispatchWireGolden pins what a nats target puts on the wire —
// subject, every header (name as sent, each value) and the body — for
// the runtime's emits (own subject, a Position) and other dispatches, in
// both modes, over signals with odd bytes in every attribute, extensions
// of every CloudEvents type and data that structured mode must write as
// base64. Messages are read back from a real server, so what is compared
// is what crossed the wire; headers are sorted, as NATS sends them in map
// order. testdata/wire.golden was written by the code before the emit
// path was made faster (no pooled messages, fmt-free headers or skipped
// checks), so a difference is a change of the wire format, not a side
// effect of a speed-up: regenerate with -update-wire only for an
// intended format change.
func TestNATSDispatchWireGolden(t *testing.T) {
	nc := runNATS(t)
	all, err := nc.SubscribeSync(">")
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	for _, tc := range wireCases(t) {
		for _, mode := range []string{ModeBinary, ModeStructured} {
			cfg := tc.cfg
			cfg.Mode = mode
			d, err := New(cfg, Env{Conn: nc, Subjects: tc.subjects})
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			if tc.pos != nil {
				ctx = WithPosition(ctx, *tc.pos)
			}
			sig := tc.sig
			if err := d.Dispatch(ctx, tc.from, &sig); err != nil {
				t.Fatalf("%s %s: Dispatch: %v", tc.name, mode, err)
			}
			msg, err := all.NextMsg(5 * time.Second)
			if err != nil {
				t.Fatalf("%s %s: nothing received: %v", tc.name, mode, err)
			}
			fmt.Fprintf(&out, "## %s (%s)\n", tc.name, mode)
			writeWire(&out, msg)
		}
	}
	path := filepath.Join("testdata", "wire.golden")
	if *updateWire {
		if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (write it with -update-wire from a build whose wire format is right)", err)
	}
	if !bytes.Equal(out.Bytes(), want) {
		gotLines, wantLines := bytes.Split(out.Bytes(), []byte("\n")), bytes.Split(want, []byte("\n"))
		for i := range max(len(gotLines), len(wantLines)) {
			var g, w []byte
			if i < len(gotLines) {
				g = gotLines[i]
			}
			if i < len(wantLines) {
				w = wantLines[i]
			}
			if !bytes.Equal(g, w) {
				t.Fatalf("the wire format changed: line %d of %s\n got: %q\nwant: %q", i+1, path, g, w)
			}
		}
	}
}

// writeWire writes msg as received: its subject, its headers sorted by
// name (the nats.go reader keeps names as sent and values as they came),
// its body quoted.
func writeWire(out *bytes.Buffer, msg *nats.Msg) {
	fmt.Fprintf(out, "subject %q\n", msg.Subject)
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range msg.Header {
			if !yield(k) {
				return
			}
		}
	}) {
		for _, v := range msg.Header[k] {
			fmt.Fprintf(out, "header %q: %q\n", k, v)
		}
	}
	fmt.Fprintf(out, "body %q\n\n", msg.Data)
}

type wireCase struct {
	name     string
	cfg      Config
	subjects bus.Subjects
	from     string
	pos      *Position
	sig      bus.Signal
}

func wireCases(t *testing.T) []wireCase {
	t.Helper()
	at := time.Date(2026, 11, 28, 1, 2, 3, 456_789_012, time.UTC)
	// An emit as the runtime publishes it: an id derived from its input's,
	// the agent's source, its input as causation, the decision's time.
	emit := event.New(bus.SpecVersion)
	emit.SetID("01JDQ7ZV3M6Y2S3QK0F5N8C9TB.0")
	emit.SetSource("/agent/team/c1")
	emit.SetType("counter.changed")
	emit.SetTime(at)
	emit.SetExtension(bus.ExtCausationID, "01JDQ7ZV3M6Y2S3QK0F5N8C9TB")
	if err := bus.SetJSONData(&emit, map[string]int{"count": 3}); err != nil {
		t.Fatal(err)
	}
	withCorr := emit.Clone()
	withCorr.SetExtension(bus.ExtCorrelationID, "conv-7")
	withCorr.SetExtension(bus.ExtTraceParent, "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")

	// Every attribute with bytes the binding percent-encodes, or that
	// strconv.Quote escapes in the Nats-Msg-Id.
	odd := event.New(bus.SpecVersion)
	odd.SetID(`id "quoted" 100% ünï\code ☃`)
	odd.SetSource("https://example.com/a%20b?q=\"x\"#frag")
	odd.SetType("odd.bytes")
	odd.SetSubject("counters/c1 ünïcode %41 \"q\" ~!")
	odd.SetDataSchema("https://example.com/schemas/v1.json?x=1")
	odd.SetTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 3600)))
	odd.SetExtension("empty", "")
	odd.SetExtension("num", 42)
	odd.SetExtension("neg", -7)
	odd.SetExtension("flag", true)
	odd.SetExtension("blob", []byte{0, 1, 2, 0xfe, 0xff})
	u, _ := url.Parse("https://example.com/x?y=z")
	odd.SetExtension("uri", types.URI{URL: *u})
	odd.SetExtension("ts", time.Date(2025, 5, 6, 7, 8, 9, 10, time.UTC))
	odd.SetExtension("spaces", "  lead and trail  ")
	odd.SetExtension("unicode", "naïve ☃ \"q\" 100%")
	if err := bus.SetJSONData(&odd, map[string]any{"note": "naïve \"quoted\" 100%"}); err != nil {
		t.Fatal(err)
	}

	// Data structured mode cannot write raw: not UTF-8, or JSON with
	// white space around it.
	binary := event.New(bus.SpecVersion)
	binary.SetID("bin-1")
	binary.SetSource("jido-bus:runtime")
	binary.SetType("blob.stored")
	binary.SetTime(at)
	binary.SetDataContentType("application/octet-stream")
	binary.DataEncoded = []byte{0, 0xff, '\r', '\n', '"', 0x80, 'a'}
	spaced := binary.Clone()
	spaced.SetID("json-spaced")
	spaced.SetDataContentType("application/json; charset=utf-8")
	spaced.DataEncoded = []byte(" {\"a\": 1}\n")
	text := binary.Clone()
	text.SetID("text-1")
	text.SetDataContentType("text/plain")
	text.DataEncoded = []byte("line one\nline \"two\" ☃")

	// No data, no time, no extensions: the fewest headers.
	bare := event.New(bus.SpecVersion)
	bare.SetID("bare")
	bare.SetSource("/agent/c1")
	bare.SetType("lifecycle.started")

	// A long id, and an agent id with every character it may hold.
	long := emit.Clone()
	long.SetID(string(bytes.Repeat([]byte("x"), 300)) + ".12")
	long.SetSource("/agent/a-1/b_2/C3")

	pos := &Position{Stream: "agent/team/c1", Seq: 42, GlobalSeq: 1234567, Index: 0}
	maxPos := &Position{Stream: "agent/a-1/b_2/C3", Seq: math.MaxUint64, GlobalSeq: math.MaxUint64 - 1, Index: 17}
	return []wireCase{
		{name: "runtime emit", from: "team/c1", pos: pos, sig: emit},
		{name: "runtime emit with correlation and trace", from: "team/c1", pos: pos, sig: withCorr},
		{name: "runtime emit, odd bytes", from: "team/c1", pos: maxPos, sig: odd},
		{name: "runtime emit, long id", from: "a-1/b_2/C3", pos: maxPos, sig: long},
		{name: "binary data", from: "c1", pos: &Position{Stream: "agent/c1", Seq: 1, GlobalSeq: 1, Index: 3}, sig: binary},
		{name: "spaced JSON data", from: "c1", pos: pos, sig: spaced},
		{name: "text data", from: "c1", sig: text},
		{name: "lifecycle: no position", from: "c1", sig: bare},
		{name: "configured prefix", from: "team/c1", subjects: bus.Subjects{Prefix: "acme.jido"}, pos: pos, sig: emit},
		{name: "fixed subject with a position", cfg: Config{Subject: "audit.signals"}, from: "team/c1", pos: pos, sig: withCorr},
		{name: "fixed subject, odd bytes", cfg: Config{Subject: "audit.odd"}, from: "c1", sig: odd},
	}
}
