package eventlog

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// TestDamagedValues damages stored values directly through Pebble and
// checks that reads and Verify name each damaged position while the rest
// stays readable.
func TestDamagedValues(t *testing.T) {
	damage := []struct {
		name    string
		corrupt func(v []byte) []byte
	}{
		{"flipped data byte", func(v []byte) []byte { v[len(v)-2] ^= 0x40; return v }},
		{"flipped header byte", func(v []byte) []byte { v[14] ^= 1; return v }},
		{"truncated value", func(v []byte) []byte { return v[:len(v)/2] }},
		{"shorter than a header", func(v []byte) []byte { return v[:7] }},
		{"empty value", func(v []byte) []byte { return nil }},
		{"unknown format", func(v []byte) []byte { v[0] = 9; return v }},
	}
	for _, tc := range damage {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			l := openMem(t, Options{})
			mustAppend(t, l, "agent/a", sigs("t.x", "a", 5)...)
			mustAppend(t, l, "agent/b", sigs("t.x", "b", 2)...)
			// Damage the values of agent/a seq 3 (global seq 3) and agent/b
			// seq 2 (global seq 7), each stored once, under its global key.
			for _, key := range [][]byte{globalKey(3), globalKey(7)} {
				v, closer, err := l.db.Get(key)
				if err != nil {
					t.Fatal(err)
				}
				bad := tc.corrupt(append([]byte(nil), v...))
				closer.Close()
				if err := l.db.Set(key, bad, nil); err != nil {
					t.Fatal(err)
				}
			}

			var good []uint64
			var damaged []*CorruptError
			for e, err := range l.ReadStream("agent/a", ReadOptions{}) {
				if ce, ok := errors.AsType[*CorruptError](err); ok {
					damaged = append(damaged, ce)
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				good = append(good, e.Seq)
			}
			if diff := cmp.Diff([]uint64{1, 2, 4, 5}, good); diff != "" {
				t.Fatalf("readable (-want +got):\n%s", diff)
			}
			if len(damaged) != 1 || damaged[0].Stream != "agent/a" || damaged[0].Seq != 3 || !errors.Is(damaged[0], ErrCorrupt) {
				t.Fatalf("damaged on read = %+v", damaged)
			}
			// A type filter passes over entries it drops without decoding
			// them, but not over damage.
			if got := damagedUnderFilter(t, l.ReadStream("agent/a", ReadOptions{Types: "other.*"})); !cmp.Equal(got, []uint64{3}) {
				t.Fatalf("damaged on a filtered read = %v", got)
			}
			if got := damagedUnderFilter(t, l.ReadAll(ReadOptions{Types: "other.*"})); !cmp.Equal(got, []uint64{3, 7}) {
				t.Fatalf("damaged on a filtered global read = %v", got)
			}

			var globalBad []uint64
			n := 0
			for e, err := range l.ReadAll(ReadOptions{}) {
				if ce, ok := errors.AsType[*CorruptError](err); ok {
					globalBad = append(globalBad, ce.GlobalSeq)
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				_ = e
				n++
			}
			if n != 5 || !cmp.Equal(globalBad, []uint64{3, 7}) {
				t.Fatalf("global: %d readable, damaged %v", n, globalBad)
			}

			report, err := l.Verify(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			var where []string
			for _, d := range report.Damaged {
				where = append(where, d.Position())
			}
			// Each damaged value is reported once, with the stream position
			// whose index entry names it.
			want := []string{"agent/b seq 2 (global seq 7)", "agent/a seq 3 (global seq 3)"}
			if tc.name == "truncated value" || tc.name == "shorter than a header" || tc.name == "empty value" {
				// A shorter value also changes the byte count of its stream.
				want = append(want, "agent/a", "agent/b")
			}
			if diff := cmp.Diff(want, where, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
				t.Fatalf("verify (-want +got):\n%s", diff)
			}
			if report.StreamEntries != 7 || report.GlobalEntries != 7 {
				t.Fatalf("verify counted %d/%d entries", report.StreamEntries, report.GlobalEntries)
			}
		})
	}
}

// TestValueUnderTheWrongKey: a well-formed value copied under another
// global key is damage too, and so is a stream index entry naming another
// entry's value.
func TestValueUnderTheWrongKey(t *testing.T) {
	for _, key := range [][]byte{globalKey(2), streamKey("agent/a", 2)} {
		t.Run(fmt.Sprintf("%q", key[:1]), func(t *testing.T) {
			l := openMem(t, Options{})
			mustAppend(t, l, "agent/a", sigs("t.x", "a", 2)...)
			from := globalKey(1)
			if key[0] == kindStream {
				from = streamKey("agent/a", 1)
			}
			v, closer, err := l.db.Get(from)
			if err != nil {
				t.Fatal(err)
			}
			moved := append([]byte(nil), v...)
			closer.Close()
			if err := l.db.Set(key, moved, nil); err != nil {
				t.Fatal(err)
			}
			report, err := l.Verify(context.Background(), nil)
			if err != nil || len(report.Damaged) != 1 || report.Damaged[0].Seq != 2 {
				t.Fatalf("verify = %+v, %v", report.Damaged, err)
			}
			if got := damagedUnderFilter(t, l.ReadStream("agent/a", ReadOptions{Types: "other.*"})); !cmp.Equal(got, []uint64{2}) {
				t.Fatalf("damaged on a filtered read = %v", got)
			}
		})
	}
}

// damagedUnderFilter reads entries, which a filter should all drop, and
// returns the positions of the damaged ones (the global sequence for the
// global log).
func damagedUnderFilter(t *testing.T, entries iter.Seq2[Entry, error]) []uint64 {
	t.Helper()
	var out []uint64
	for e, err := range entries {
		ce, ok := errors.AsType[*CorruptError](err)
		switch {
		case ok:
			out = append(out, max(ce.Seq, ce.GlobalSeq))
		case err != nil:
			t.Fatal(err)
		default:
			t.Fatalf("the filter let %s through", e.Event.Type())
		}
	}
	return out
}
