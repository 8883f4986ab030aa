package agents_test

import (
	"bytes"
	"testing"

	"github.com/jido-bus/jido-bus/agents"
)

// FuzzDecodeDirective: the log decoder never panics, and whatever it
// accepts encodes to a form that decodes to the same encoding (the log can
// be rewritten without drift).
func FuzzDecodeDirective(f *testing.F) {
	f.Add([]byte(`{"kind":"stop","reason":"done"}`))
	f.Add([]byte(`{"kind":"emit","signal":{"specversion":"1.0","id":"a","source":"s","type":"t","data":{"x":1}}}`))
	f.Add([]byte(`{"kind":"unknown_thing","x":[1,2]}`))
	codec := agents.NewDirectiveCodec()
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := codec.Decode(data)
		if err != nil {
			return
		}
		enc, err := codec.Encode(d)
		if err != nil {
			// Some decodable values cannot be written back (an event the
			// sdk reads but will not write); that must be an error, never
			// a panic, and must not happen for what Cmd produces.
			return
		}
		d2, err := codec.Decode(enc)
		if err != nil {
			t.Fatalf("re-decoding %s: %v", enc, err)
		}
		enc2, err := codec.Encode(d2)
		if err != nil || !bytes.Equal(enc, enc2) {
			t.Fatalf("encoding drifted:\n%s\n%s (%v)", enc, enc2, err)
		}
	})
}

// FuzzStepCounter: arbitrary signal data never makes Step panic, and the
// counter's state stays a number.
func FuzzStepCounter(f *testing.F) {
	f.Add("counter.increment", []byte(`{"by":3}`))
	f.Add("counter.decrement", []byte(`{"by":-1e308}`))
	f.Add("counter.reset", []byte(`null`))
	reg := testTypes(f)
	def, _ := reg.Lookup("counter")
	a, err := def.New("c", nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, typ string, data []byte) {
		sig, err := agents.NewSignal("counter.increment", nil)
		if err != nil {
			t.Fatal(err)
		}
		sig.SetType(typ)
		sig.SetID("s")
		sig.SetSource("fuzz")
		sig.DataEncoded = data
		next, _ := agents.Step(a, sig)
		if _, ok := next.State["count"].(float64); !ok {
			t.Fatalf("count became %#v", next.State["count"])
		}
	})
}
