package codec

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/bus"
)

// FuzzDecode feeds arbitrary headers and bodies to the decoder: it must
// never panic, every refusal must carry a reason, and whatever it accepts
// must survive being written again in either mode and read back.
func FuzzDecode(f *testing.F) {
	f.Add("", "", "", "", "counter.increment", []byte(`{"by":2}`))
	f.Add("1.0", "id-1", "src", "counter.increment", "counter.increment", []byte(`{"by":2}`))
	f.Add("1.0.2", "id-1", "https://x/y", "a.b", "", []byte("text"))
	f.Add("0.3", "id", "s", "t", "t", []byte{})
	f.Add("1.0", "100%", "s", "a..b", "a", []byte{0xff, 0x00})
	f.Add("structured", "", "", "", "t", []byte(`{"specversion":"1.0","id":"a","source":"b","type":"t","data":{"x":1}}`))
	f.Add("structured", "", "", "", "t", []byte(`{"specversion":"1.0.2","id":"a","source":"b","type":"t","data_base64":"AAEC"}`))
	f.Add("structured", "", "", "", "t", []byte(`{"specversion":`))
	f.Fuzz(func(t *testing.T, specVersion, id, source, typ, subjectType string, body []byte) {
		msg := &nats.Msg{Subject: "jido.signal.x", Data: body, Header: nats.Header{}}
		if specVersion == "structured" {
			msg.Header.Set(HeaderContentType, ContentTypeStructured)
		} else {
			for k, v := range map[string]string{"ce-specversion": specVersion, "ce-id": id, "ce-source": source, "ce-type": typ} {
				if v != "" {
					msg.Header.Set(k, v)
				}
			}
		}
		d := &Decoder{Limits: bus.Limits{MaxDataBytes: 4096}}
		s, _, err := d.Decode(msg, subjectType)
		if err != nil {
			if bus.ErrorType(err) == bus.ReasonInternal {
				t.Fatalf("refusal without a reason: %v", err)
			}
			return
		}
		for _, mode := range []Mode{Binary, Structured} {
			out, err := Encode("jido.signal.x", &s, mode)
			if err != nil {
				t.Fatalf("re-encode %v: %v", mode, err)
			}
			again, _, err := d.Decode(out, subjectType)
			if err != nil {
				t.Fatalf("re-decode %v of %v: %v", mode, s, err)
			}
			if again.ID() != s.ID() || again.Type() != s.Type() || again.Source() != s.Source() || string(again.Data()) != string(s.Data()) {
				t.Fatalf("%v round trip changed the signal:\n%v\n%v", mode, s, again)
			}
		}
	})
}

// FuzzDecodeHeaders feeds arbitrary header blocks — one "name: value" a
// line, names repeating in any case — to the decoder with small limits.
// Besides FuzzDecode's properties it checks that the decoder is
// deterministic (a message with two ce-id headers was once read one way
// or the other by map order), and that whatever it accepts passes the
// log's own check: every attribute a CloudEvents string, within the
// limits.
func FuzzDecodeHeaders(f *testing.F) {
	f.Add("ce-specversion: 1.0\nce-id: a\nce-source: s\nce-type: t", []byte(`{"by":1}`))
	f.Fuzz(func(t *testing.T, headers string, body []byte) {
		msg := &nats.Msg{Subject: "jido.signal.t", Data: body, Header: nats.Header{}}
		for line := range strings.SplitSeq(headers, "\n") {
			k, v, _ := strings.Cut(line, ": ")
			msg.Header[k] = append(msg.Header[k], v)
		}
		lim := bus.Limits{MaxDataBytes: 4096, MaxAttributeBytes: 4096}
		d := &Decoder{Limits: lim, NewID: func() string { return "01PLAIN" }, Now: func() time.Time { return time.Unix(0, 0) }}
		s, _, err := d.Decode(msg, "t")
		for range 3 {
			s2, _, err2 := d.Decode(msg, "t")
			if fmt.Sprint(err) != fmt.Sprint(err2) || err == nil && fmt.Sprint(s) != fmt.Sprint(s2) {
				t.Fatalf("the same message decoded two ways:\n%v %v\n%v %v", s, err, s2, err2)
			}
		}
		if err != nil {
			if bus.ErrorType(err) == bus.ReasonInternal {
				t.Fatalf("refusal without a reason: %v", err)
			}
			return
		}
		if err := bus.ValidateSignal(&s, lim); err != nil {
			t.Fatalf("accepted a signal the log refuses: %v", err)
		}
		out, err := Encode("jido.signal.t", &s, Binary)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		again, _, err := d.Decode(out, "t")
		if err != nil {
			t.Fatalf("re-decode of %v: %v", s, err)
		}
		if again.ID() != s.ID() || again.Source() != s.Source() || fmt.Sprint(again.Extensions()) != fmt.Sprint(s.Extensions()) {
			t.Fatalf("round trip changed the signal:\n%v\n%v", s, again)
		}
	})
}
