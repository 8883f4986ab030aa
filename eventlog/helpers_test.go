package eventlog

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/jido-bus/jido-bus/bus"
)

// openMem opens a Log on an in-memory filesystem, closed when t ends.
func openMem(t testing.TB, opts Options) *Log {
	t.Helper()
	if opts.FS == nil {
		opts.FS = vfs.NewMem()
	}
	l, err := Open("db", opts)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() {
		if err := l.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return l
}

// sig returns a valid signal of type typ with the given id and a small
// JSON payload.
func sig(typ, id string) bus.Signal {
	s, err := bus.NewSignal(typ, "test/source", map[string]string{"id": id})
	if err != nil {
		panic(err)
	}
	s.SetID(id)
	s.SetTime(time.Date(2025, 1, 2, 3, 4, 5, 6, time.UTC))
	return s
}

// sigs returns n signals of type typ with ids prefix1 … prefixN.
func sigs(typ, prefix string, n int) []bus.Signal {
	out := make([]bus.Signal, n)
	for i := range out {
		out[i] = sig(typ, fmt.Sprintf("%s%d", prefix, i+1))
	}
	return out
}

// collect drains it; it fails the test on the first error.
func collect(t testing.TB, it iter.Seq2[Entry, error]) []Entry {
	t.Helper()
	var out []Entry
	for e, err := range it {
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		out = append(out, e)
	}
	return out
}

// seqs returns the per-stream sequences of entries.
func seqs(entries []Entry) []uint64 {
	out := make([]uint64, len(entries))
	for i, e := range entries {
		out[i] = e.Seq
	}
	return out
}

func mustAppend(t testing.TB, l *Log, stream string, events ...bus.Signal) AppendResult {
	t.Helper()
	res, err := l.Append(context.Background(), stream, AnyVersion, events...)
	if err != nil {
		t.Fatalf("append to %s: %v", stream, err)
	}
	return res
}

// cmpSorted returns a sorted copy of s.
func cmpSorted(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}
