package codec

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/bus"
)

var updateDecode = flag.Bool("update-decode", false, "rewrite testdata/decode.golden from the current output")

// TestDecodeGolden pins what Decode makes of inbound messages — the
// signal (as its structured JSON, which holds every attribute, each
// extension's type and the data) and the mode, or the error — for the
// messages agents receive all the time and for messages with odd bytes,
// odd header spellings and faults. testdata/decode.golden was written by
// the decoder before it was made to allocate less, so a difference is a
// change of behaviour, not a side effect of a speed-up: regenerate with
// -update-decode only for an intended change.
func TestDecodeGolden(t *testing.T) {
	var out bytes.Buffer
	d := testDecoder()
	small := testDecoder()
	small.Limits = bus.Limits{MaxDataBytes: 8, MaxAttributeBytes: 4 * 64}
	for _, tc := range decodeCases() {
		dec := d
		if tc.small {
			dec = small
		}
		msg := &nats.Msg{Subject: "jido.agent.c1." + tc.subjectType, Header: tc.header, Data: []byte(tc.body)}
		s, mode, err := dec.Decode(msg, tc.subjectType)
		fmt.Fprintf(&out, "## %s\n", tc.name)
		if err != nil {
			fmt.Fprintf(&out, "error (%s) %s\n\n", bus.ErrorType(err), err)
			continue
		}
		b, merr := s.MarshalJSON()
		if merr != nil {
			t.Fatalf("%s: MarshalJSON: %v", tc.name, merr)
		}
		fmt.Fprintf(&out, "%s %s\n\n", mode, b)
	}
	path := filepath.Join("testdata", "decode.golden")
	if *updateDecode {
		if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (write it with -update-decode from a build whose decoding is right)", err)
	}
	if got := out.String(); got != string(want) {
		g, w := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		for i := range max(len(g), len(w)) {
			var gl, wl string
			if i < len(g) {
				gl = g[i]
			}
			if i < len(w) {
				wl = w[i]
			}
			if gl != wl {
				t.Fatalf("decoding changed: line %d of %s\n got: %s\nwant: %s", i+1, path, gl, wl)
			}
		}
	}
}

type decodeCase struct {
	name        string
	subjectType string
	header      nats.Header
	body        string
	small       bool // under small limits
}

func decodeCases() []decodeCase {
	// A cast as `jido-bus send` and the runtime's emits write it.
	cast := func() nats.Header {
		return nats.Header{
			"ce-specversion":     {"1.0"},
			"ce-id":              {"01JDQ7ZV3M6Y2S3QK0F5N8C9TB"},
			"ce-source":          {"/agent/team/c1"},
			"ce-type":            {"counter.increment"},
			"ce-time":            {"2026-11-28T01:02:03.456789012Z"},
			"ce-causationid":     {"01JDQ7ZV3M6Y2S3QK0F5N8C9TA"},
			"ce-correlationid":   {"conv-7"},
			"ce-datacontenttype": {"application/json"},
			"content-type":       {"application/json"},
			"Jido-Stream":        {"agent/team/c1"},
			"Jido-Seq":           {"42"},
			"Nats-Msg-Id":        {`"/agent/team/c1" "01JDQ7ZV3M6Y2S3QK0F5N8C9TB"`},
		}
	}
	with := func(h nats.Header, kv ...string) nats.Header {
		for i := 0; i < len(kv); i += 2 {
			if kv[i+1] == "\x00delete" {
				delete(h, kv[i])
				continue
			}
			h[kv[i]] = append(h[kv[i]], kv[i+1])
		}
		return h
	}
	set := func(h nats.Header, kv ...string) nats.Header {
		for i := 0; i < len(kv); i += 2 {
			h[kv[i]] = []string{kv[i+1]}
		}
		return h
	}
	const ct = "content-type"
	structured := nats.Header{ct: {ContentTypeStructured}}
	return []decodeCase{
		{name: "binary cast", subjectType: "counter.increment", header: cast(), body: `{"by":2}`},
		{name: "binary cast without data", subjectType: "counter.increment", header: set(cast(), "ce-datacontenttype", "", "content-type", "")},
		{name: "binary, mixed-case header names", subjectType: "counter.increment",
			header: nats.Header{"CE-SpecVersion": {"1.0"}, "Ce-Id": {"x1"}, "ce-SOURCE": {"/a"}, "CE-Type": {"counter.increment"}, "Ce-Traceparent": {"00-ab-cd-01"}, "Content-Type": {"text/plain"}}, body: "hi"},
		{name: "binary, percent-encoded values", subjectType: "odd.bytes",
			header: set(cast(), "ce-type", "odd.bytes", "ce-id", "id%20%22quoted%22%20100%25%20%C3%BCn%C3%AF\\code%20%E2%98%83",
				"ce-subject", "counters/c1%20%C3%BCn%C3%AFcode%20%2541", "ce-source", "https://example.com/a%2520b?q=%22x%22#frag",
				"ce-unicode", "na%C3%AFve%20%E2%98%83", "ce-empty", "", "ce-literal", "100%zz%4", "ce-dataschema", "https://example.com/s.json"),
			body: `{"a":1}`},
		{name: "binary, specversion 1.0.2 and an offset time", subjectType: "counter.increment",
			header: set(cast(), "ce-specversion", "1.0.2", "ce-time", "2026-01-02T03:04:05.5+01:00"), body: `{}`},
		{name: "binary, no ce-type takes the subject's", subjectType: "counter.increment", header: with(cast(), "ce-type", "\x00delete"), body: `{}`},
		{name: "binary, binary data with content-type only", subjectType: "blob.stored",
			header: set(with(cast(), "ce-datacontenttype", "\x00delete"), "ce-type", "blob.stored", "content-type", "application/octet-stream"), body: "\x00\xff\r\n\x80"},
		{name: "plain message, JSON", subjectType: "counter.increment", body: ` {"by":1} `},
		{name: "plain message, text", subjectType: "counter.increment", header: nats.Header{"Nats-Msg-Id": {"m1"}}, body: "hello"},
		{name: "plain message, empty", subjectType: "counter.increment"},
		{name: "structured", subjectType: "counter.increment", header: structured,
			body: `{"specversion":"1.0","id":"s1","source":"/agent/c1","type":"counter.increment","time":"2026-11-28T01:02:03.456789012Z","datacontenttype":"application/json","data":{"by":2},"causationid":"c0","num":7,"flag":true}`},
		{name: "structured, base64 data", subjectType: "blob.stored", header: nats.Header{"Content-Type": {"application/cloudevents+json; charset=utf-8"}},
			body: `{"specversion":"1.0","id":"s2","source":"jido-bus:runtime","type":"blob.stored","datacontenttype":"application/octet-stream","data_base64":"AP8NCoA="}`},
		{name: "structured, specversion 1.0.2", subjectType: "counter.increment", header: structured,
			body: `{"specversion":"1.0.2","id":"s3","source":"/a","type":"counter.increment"}`},
		{name: "error: structured, not JSON", subjectType: "counter.increment", header: structured, body: `{"specversion":`},
		{name: "error: structured, no specversion", subjectType: "counter.increment", header: structured, body: `{"id":"x"}`},
		{name: "error: structured, specversion 0.3", subjectType: "counter.increment", header: structured, body: `{"specversion":"0.3","id":"x","source":"/a","type":"counter.increment"}`},
		{name: "error: structured, type mismatch", subjectType: "counter.increment", header: structured, body: `{"specversion":"1.0","id":"x","source":"/a","type":"counter.reset"}`},
		{name: "error: content-type twice", subjectType: "counter.increment", header: with(cast(), "Content-Type", "text/plain"), body: `{}`},
		{name: "error: ce-id twice in two cases", subjectType: "counter.increment", header: with(cast(), "CE-ID", "other"), body: `{}`},
		{name: "error: ce-id with two values", subjectType: "counter.increment", header: with(cast(), "ce-id", "other"), body: `{}`},
		{name: "error: an extension twice", subjectType: "counter.increment", header: with(cast(), "CE-CausationId", "other"), body: `{}`},
		{name: "error: ce- names nothing", subjectType: "counter.increment", header: with(cast(), "ce-", "x"), body: `{}`},
		{name: "error: no specversion", subjectType: "counter.increment", header: with(cast(), "ce-specversion", "\x00delete"), body: `{}`},
		{name: "error: specversion 0.3", subjectType: "counter.increment", header: set(cast(), "ce-specversion", "0.3"), body: `{}`},
		{name: "error: no id", subjectType: "counter.increment", header: with(cast(), "ce-id", "\x00delete"), body: `{}`},
		{name: "error: no source", subjectType: "counter.increment", header: with(cast(), "ce-source", "\x00delete"), body: `{}`},
		{name: "error: source not a URI reference", subjectType: "counter.increment", header: set(cast(), "ce-source", "%3A%2F%2Fbad"), body: `{}`},
		{name: "error: time not RFC 3339", subjectType: "counter.increment", header: set(cast(), "ce-time", "yesterday"), body: `{}`},
		{name: "error: control character", subjectType: "counter.increment", header: set(cast(), "ce-subject", "a%01b"), body: `{}`},
		{name: "error: not UTF-8", subjectType: "counter.increment", header: set(cast(), "ce-correlationid", "a%FFb"), body: `{}`},
		{name: "error: extension name", subjectType: "counter.increment", header: set(cast(), "ce-bad_name", "x"), body: `{}`},
		{name: "error: type mismatch", subjectType: "counter.reset", header: cast(), body: `{}`},
		{name: "error: invalid type", subjectType: "counter.increment", header: set(cast(), "ce-type", "counter.*"), body: `{}`},
		{name: "error: data too large", subjectType: "counter.increment", header: cast(), body: `{"by":123456}`, small: true},
		{name: "error: attributes too large", subjectType: "counter.increment", header: set(cast(), "ce-subject", strings.Repeat("s", 100)), body: `{}`, small: true},
		{name: "error: attributes over the input limit", subjectType: "counter.increment",
			header: nats.Header{"ce-specversion": {"1.0"}, "ce-id": {"i"}, "ce-source": {"/a"}, "ce-type": {"counter.increment"}, "ce-subject": {strings.Repeat("s", 70)}}, small: true},
		{name: "error: attribute headers far too large", subjectType: "counter.increment", header: set(cast(), "ce-subject", strings.Repeat("%41", 300)), body: `{}`, small: true},
	}
}
