package codec

import (
	"testing"

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
