package codec

import (
	"testing"
)

func BenchmarkEncode(b *testing.B) {
	s := sampleSignal(b)
	for _, mode := range []Mode{Binary, Structured} {
		b.Run(mode.String(), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Encode("jido.agent.c1.counter.increment", &s, mode); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkDecode(b *testing.B) {
	s := sampleSignal(b)
	d := &Decoder{}
	for _, mode := range []Mode{Binary, Structured} {
		msg, err := Encode("jido.agent.c1.counter.increment", &s, mode)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(mode.String(), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(msg.Data)))
			for b.Loop() {
				if _, _, err := d.Decode(msg, "counter.increment"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
