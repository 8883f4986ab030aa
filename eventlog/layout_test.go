package eventlog

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/google/go-cmp/cmp"
)

// keysOf returns the keys of kind stored in l, and their values.
func keysOf(t *testing.T, l *Log, kind byte) map[string][]byte {
	t.Helper()
	it, err := l.db.NewIter(&pebble.IterOptions{LowerBound: []byte{kind}, UpperBound: []byte{kind + 1}})
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	out := map[string][]byte{}
	for valid := it.First(); valid; valid = it.Next() {
		out[string(it.Key())] = append([]byte(nil), it.Value()...)
	}
	if err := it.Error(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestEachValueStoredOnce: every entry's value is under its global key
// only; its stream key holds the 8-byte global sequence, which names a
// value holding that very stream position.
func TestEachValueStoredOnce(t *testing.T) {
	l := openMem(t, Options{})
	mustAppend(t, l, "agent/a", sigs("t.x", "a", 3)...)
	mustAppend(t, l, "agent/b", sigs("t.x", "b", 2)...)
	mustAppend(t, l, "agent/a", sig("t.x", "a4"))
	values, index := keysOf(t, l, kindGlobal), keysOf(t, l, kindStream)
	if len(values) != 6 || len(index) != 6 {
		t.Fatalf("%d values and %d index entries, want 6 each", len(values), len(index))
	}
	var d decoder
	for k, iv := range index {
		stream, seq, ok := parseStreamKey([]byte(k))
		if !ok || len(iv) != indexValueLen {
			t.Fatalf("index entry %q = %x", k, iv)
		}
		gseq := binary.BigEndian.Uint64(iv)
		e, err := d.decode(values[string(globalKey(gseq))])
		if err != nil || e.Stream != stream || e.Seq != seq || e.GlobalSeq != gseq {
			t.Fatalf("index %s seq %d names global seq %d holding %s seq %d (gseq %d): %v", stream, seq, gseq, e.Stream, e.Seq, e.GlobalSeq, err)
		}
	}
	// The stream's size counts each value once.
	var size uint64
	for e, err := range l.ReadStream("agent/a", ReadOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		size += uint64(e.Size)
	}
	if info, _ := l.Stream("agent/a"); info.Bytes != size {
		t.Fatalf("agent/a is %d bytes by its metadata, %d by its entries", info.Bytes, size)
	}
}

// TestDamagedIndexEntry: a stream index entry that is not a global
// sequence, names one above any handed out, names a position holding no
// value, or names another stream's value, is reported at its stream
// position by reads and by Verify; the entries around it stay readable,
// and the value it should have named still reads in the global order.
func TestDamagedIndexEntry(t *testing.T) {
	for _, tc := range []struct {
		name   string
		value  []byte
		reason string
	}{
		{"short", []byte{0, 1}, "2 bytes, not a global sequence"},
		{"zero", make([]byte, 8), "8 bytes, not a global sequence"},
		{"beyond", binary.BigEndian.AppendUint64(nil, 1<<40), "above the last one handed out"},
		{"missing", binary.BigEndian.AppendUint64(nil, 6), "holds no value"},
		{"another stream's", binary.BigEndian.AppendUint64(nil, 4), "holds agent/b seq 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := openMem(t, Options{})
			mustAppend(t, l, "agent/a", sigs("t.x", "a", 3)...)
			mustAppend(t, l, "agent/b", sig("t.x", "b1"))
			mustAppend(t, l, "agent/a", sig("t.x", "a4"))
			mustAppend(t, l, "agent/b", sig("t.x", "b2"))
			if tc.name == "missing" {
				if err := l.db.Delete(globalKey(6), nil); err != nil {
					t.Fatal(err)
				}
			}
			if err := l.db.Set(streamKey("agent/a", 2), tc.value, nil); err != nil {
				t.Fatal(err)
			}
			for _, o := range []ReadOptions{{}, {Backward: true}, {Types: "other.*"}, {From: 2}} {
				var good []uint64
				var bad []*CorruptError
				for e, err := range l.ReadStream("agent/a", o) {
					if ce, ok := errors.AsType[*CorruptError](err); ok {
						bad = append(bad, ce)
						continue
					}
					if err != nil {
						t.Fatal(err)
					}
					good = append(good, e.Seq)
				}
				want := []uint64{1, 3, 4}
				switch {
				case o.Backward:
					want = []uint64{4, 3, 1}
				case o.Types != "":
					want = nil
				case o.From == 2:
					want = []uint64{3, 4}
				}
				if !cmp.Equal(good, want) || len(bad) != 1 || bad[0].Stream != "agent/a" || bad[0].Seq != 2 || !strings.Contains(bad[0].Reason, tc.reason) {
					t.Fatalf("read %+v: good %v, damaged %+v", o, good, bad)
				}
			}
			r, err := l.Verify(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var where []string
			for _, d := range r.Damaged {
				where = append(where, d.Position()+": "+d.Reason)
			}
			if len(where) == 0 || !strings.HasPrefix(where[0], "agent/a") {
				t.Fatalf("verify: %q", where)
			}
			found := false
			for _, w := range where {
				found = found || strings.HasPrefix(w, "agent/a seq 2: ") && strings.Contains(w, tc.reason)
			}
			if !found {
				t.Fatalf("verify does not name agent/a seq 2 (%s): %q", tc.reason, where)
			}
			if tc.name != "missing" {
				n := 0
				for _, err := range l.ReadAll(ReadOptions{}) {
					if err != nil {
						t.Fatal(err)
					}
					n++
				}
				if n != 6 {
					t.Fatalf("global order holds %d entries, want 6", n)
				}
			}
		})
	}
}

// TestRemovalRemovesIndexAndValue: truncating and deleting remove each
// entry's index entry, value and idempotency record, and nothing else.
func TestRemovalRemovesIndexAndValue(t *testing.T) {
	ctx := context.Background()
	l := openMem(t, Options{})
	mustAppend(t, l, "agent/a", sigs("t.x", "a", 3)...)
	mustAppend(t, l, "agent/b", sigs("t.x", "b", 2)...)
	mustAppend(t, l, "agent/a", sig("t.x", "a4"))
	mustAppend(t, l, "agent/c", sig("t.x", "c1"))
	if n, err := l.TruncateBefore(ctx, "agent/a", 3); err != nil || n != 2 {
		t.Fatalf("truncate: %d, %v", n, err)
	}
	if n, err := l.DeleteStream(ctx, "agent/b"); err != nil || n != 2 {
		t.Fatalf("delete: %d, %v", n, err)
	}
	names := func(kind byte) []string {
		var out []string
		for k := range keysOf(t, l, kind) {
			switch kind {
			case kindGlobal:
				g, _ := parseGlobalKey([]byte(k))
				out = append(out, fmt.Sprint(g))
			case kindStream:
				s, seq, _ := parseStreamKey([]byte(k))
				out = append(out, fmt.Sprintf("%s/%d", s, seq))
			default:
				out = append(out, strings.ReplaceAll(k[1:], "\x00", "|"))
			}
		}
		return out
	}
	sorted := func(s []string) []string { return cmpSorted(s) }
	if got := sorted(names(kindGlobal)); !cmp.Equal(got, []string{"3", "6", "7"}) {
		t.Fatalf("values left: %v", got)
	}
	if got := sorted(names(kindStream)); !cmp.Equal(got, []string{"agent/a/3", "agent/a/4", "agent/c/1"}) {
		t.Fatalf("index entries left: %v", got)
	}
	if got := names(kindIdem); len(got) != 3 {
		t.Fatalf("idempotency records left: %q", got)
	}
	r, err := l.Verify(ctx, nil)
	if err != nil || !r.OK() || r.StreamEntries != 3 || r.GlobalEntries != 3 {
		t.Fatalf("verify: %+v, %v", r, err)
	}
}

// TestValueLeftByARemoval: a value whose stream position is gone (as a
// removal through a damaged index entry leaves it) is reported by Verify.
func TestValueLeftByARemoval(t *testing.T) {
	ctx := context.Background()
	l := openMem(t, Options{})
	mustAppend(t, l, "agent/a", sigs("t.x", "a", 3)...)
	if err := l.db.Set(streamKey("agent/a", 1), []byte("garbage"), nil); err != nil {
		t.Fatal(err)
	}
	if n, err := l.TruncateBefore(ctx, "agent/a", 2); err != nil || n != 1 {
		t.Fatalf("truncate: %d, %v", n, err)
	}
	r, err := l.Verify(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, d := range r.Damaged {
		found = found || d.GlobalSeq == 1 && d.Stream == "agent/a" && d.Seq == 1 && strings.Contains(d.Reason, "does not retain")
	}
	if !found {
		t.Fatalf("verify does not report the value left behind: %+v", r.Damaged)
	}
}
