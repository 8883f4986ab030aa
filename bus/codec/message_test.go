package codec

import (
	"reflect"
	"testing"

	"github.com/jido-bus/jido-bus/bus"
)

// TestMessageReusedEncodesAsEncode: a Message encoded into again and again
// — after signals with more headers, other modes and other data — holds
// exactly what Encode makes of each signal: nothing of the last one stays.
func TestMessageReusedEncodesAsEncode(t *testing.T) {
	full := sampleSignal(t)
	for i := range 70 { // more headers than a Message keeps room for
		full.SetExtension("x"+string(rune('a'+i%26))+string(rune('a'+i/26)), "v")
	}
	bare := sampleSignal(t)
	bare.SetSubject("")
	bare.SetDataSchema("")
	bare.SetExtension(bus.ExtCausationID, nil)
	bare.SetExtension(bus.ExtTraceParent, nil)
	bare.DataEncoded = nil
	bare.SetDataContentType("")
	var m Message
	for round, c := range []struct {
		s    bus.Signal
		mode Mode
	}{{full, Binary}, {bare, Binary}, {full, Structured}, {sampleSignal(t), Binary}, {bare, Structured}, {full, Binary}, {bare, Binary}} {
		want, err := Encode("subj.a", &c.s, c.mode)
		if err != nil {
			t.Fatal(err)
		}
		m.Set("Stale", "from the last round")
		if err := m.EncodeInto("subj.a", &c.s, c.mode); err != nil {
			t.Fatal(err)
		}
		if m.Msg.Subject != want.Subject || !reflect.DeepEqual(m.Msg.Header, want.Header) || string(m.Msg.Data) != string(want.Data) {
			t.Fatalf("round %d (%v): EncodeInto made\n%v %q\nEncode made\n%v %q", round, c.mode, m.Msg.Header, m.Msg.Data, want.Header, want.Data)
		}
		// A value's slice is capped: appending to it leaves the next alone.
		for k, v := range m.Msg.Header {
			if cap(v) != 1 {
				t.Fatalf("round %d: header %s has capacity %d, want 1", round, k, cap(v))
			}
		}
	}
}
