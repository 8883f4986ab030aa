package eventlog

import (
	"encoding/binary"
	"hash/crc32"
	"testing"
	"time"
)

// FuzzDecodeEntry feeds the entry value decoder arbitrary bytes. Most random
// values fail the checksum, which would keep the fuzzer out of the parser,
// so each input is tried twice: as is, and with a valid format byte and
// checksum put in front of its body. The decoder must never panic, and a
// value it accepts must survive a re-encode unchanged.
func FuzzDecodeEntry(f *testing.F) {
	seed := encodeEntry(nil, "agent/a", 1, 1, time.Unix(0, 1), ptr(sig("user.created", "seed")))
	f.Add(seed)
	ext := sig("t.x", "ext")
	ext.SetExtension("correlationid", "c")
	ext.SetSubject("s")
	f.Add(encodeEntry(nil, "conversation/p/c", 9, 12, time.Unix(5, 0), &ext))
	f.Fuzz(func(t *testing.T, v []byte) {
		var d decoder
		_, _ = d.decode(v)
		if len(v) < 5 {
			return
		}
		fixed := append([]byte{formatV1, 0, 0, 0, 0}, v[5:]...)
		binary.BigEndian.PutUint32(fixed[1:], crc32.Checksum(fixed[5:], castagnoli))
		e, err := d.decode(fixed)
		if err != nil {
			return
		}
		if err := e.Event.Validate(); err != nil {
			return // the decoder does not validate; Append did when it was written
		}
		again := encodeEntry(nil, e.Stream, e.Seq, e.GlobalSeq, e.Time, &e.Event)
		e2, err := d.decode(again)
		if err != nil {
			t.Fatalf("re-encoded value does not decode: %v", err)
		}
		j1, _ := e.Event.MarshalJSON()
		j2, _ := e2.Event.MarshalJSON()
		if string(j1) != string(j2) || e.Stream != e2.Stream || e.Seq != e2.Seq || e.GlobalSeq != e2.GlobalSeq {
			t.Fatalf("round trip changed the entry:\n%s\n%s", j1, j2)
		}
	})
}

func ptr[T any](v T) *T { return &v }
