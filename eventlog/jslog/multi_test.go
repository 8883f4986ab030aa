package jslog

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/eventlog"
)

// TestAppendMultiIsAtomic: parts of one partition are written all or
// nothing (one atomic batch), later parts of a stream see the earlier
// ones, and the batch's messages take consecutive sequences.
func TestAppendMultiIsAtomic(t *testing.T) {
	l, _ := openLog(t, Options{})
	ctx := context.Background()
	mustAppend(t, l, "agent/p/b", eventlog.AnyVersion, sig("t.x", "b1"))
	// The second part's expectation fails: the first must not land.
	_, err := l.AppendMulti(ctx, []eventlog.StreamAppend{
		{Stream: "agent/p", Expected: eventlog.NoStream, Events: sigs("t.x", "a1")},
		{Stream: "agent/p/b", Expected: eventlog.NoStream, Events: sigs("t.x", "b2")},
	})
	if !errors.Is(err, eventlog.ErrWrongVersion) {
		t.Fatalf("err = %v, want ErrWrongVersion", err)
	}
	if got := collectAll(l, "agent/p"); len(got) != 0 {
		t.Fatalf("agent/p holds %d entries after a refused multi-append", len(got))
	}
	res, err := l.AppendMulti(ctx, []eventlog.StreamAppend{
		{Stream: "agent/p", Expected: eventlog.NoStream, Events: sigs("t.x", "a1")},
		{Stream: "agent/p/b", Expected: eventlog.ExactVersion(1), Events: sigs("t.x", "b2")},
		{Stream: "agent/p", Expected: eventlog.ExactVersion(1), Events: sigs("t.x", "a2")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]uint64{1, 2, 2}, []uint64{res[0].Version, res[1].Version, res[2].Version}); diff != "" {
		t.Fatalf("versions (-want +got):\n%s", diff)
	}
	// agent/p's two parts are one message; agent/p/b's the next.
	if res[0].Positions[0].GlobalSeq != res[2].Positions[0].GlobalSeq || res[1].Positions[0].GlobalSeq != res[0].Positions[0].GlobalSeq+1 {
		t.Fatalf("sequences: %+v", res)
	}
	a := collectAll(l, "agent/p")
	b := collectAll(l, "agent/p/b")
	if diff := cmp.Diff([]string{"a1", "a2"}, ids(a)); diff != "" {
		t.Fatalf("agent/p (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"b1", "b2"}, ids(b)); diff != "" {
		t.Fatalf("agent/p/b (-want +got):\n%s", diff)
	}
	if a[0].GlobalSeq != res[0].Positions[0].GlobalSeq || b[1].GlobalSeq != res[1].Positions[0].GlobalSeq {
		t.Fatalf("read back at other sequences than acknowledged: %+v %+v", a, b)
	}
	// The same multi-append again is all duplicates and writes nothing.
	again, err := l.AppendMulti(ctx, []eventlog.StreamAppend{
		{Stream: "agent/p", Expected: eventlog.NoStream, Events: sigs("t.x", "a1")},
		{Stream: "agent/p/b", Expected: eventlog.ExactVersion(1), Events: sigs("t.x", "b2")},
	})
	if err != nil || !again[0].Positions[0].Duplicate || !again[1].Positions[0].Duplicate || again[0].Version != 2 {
		t.Fatalf("repeat: %+v %v", again, err)
	}
}

func TestAppendMultiRefusesAcrossPartitions(t *testing.T) {
	l, _ := openLog(t, Options{Partitions: 8})
	// Find two roots in different partitions.
	other := ""
	for _, r := range []string{"b", "c", "d", "e", "f", "g", "h", "i", "j"} {
		if Partition("agent/"+r, 8) != Partition("agent/a", 8) {
			other = "agent/" + r
			break
		}
	}
	_, err := l.AppendMulti(context.Background(), []eventlog.StreamAppend{
		{Stream: "agent/a", Events: sigs("t.x", "1")},
		{Stream: other, Events: sigs("t.x", "2")},
	})
	if !errors.Is(err, ErrCrossPartition) {
		t.Fatalf("err = %v, want ErrCrossPartition", err)
	}
	if len(collectAll(l, "agent/a")) != 0 {
		t.Fatal("a refused cross-partition append wrote agent/a")
	}
}

// TestAppendAllNew: with AllNew a duplicate, stored or twice in the same
// append, fails the call and writes nothing.
func TestAppendAllNew(t *testing.T) {
	l, _ := openLog(t, Options{})
	ctx := context.Background()
	mustAppend(t, l, "agent/a", eventlog.AnyVersion, sig("t.x", "a1"))
	cases := []struct {
		name   string
		events []bus.Signal
		index  int
		id     string
		seq    uint64
	}{
		{"stored before", sigs("t.x", "a2", "a1", "a3"), 1, "a1", 1},
		{"twice in the append", sigs("t.x", "a2", "a2"), 1, "a2", 2},
	}
	for _, c := range cases {
		_, err := l.AppendMulti(ctx, []eventlog.StreamAppend{{Stream: "agent/a", Expected: eventlog.ExactVersion(1), AllNew: true, Events: c.events}})
		de, ok := errors.AsType[*eventlog.DuplicateError](err)
		if !ok || de.Index != c.index || de.ID != c.id || de.Existing.Seq != c.seq {
			t.Fatalf("%s: err = %v, want a duplicate of %s at index %d, seq %d", c.name, err, c.id, c.index, c.seq)
		}
		if n := len(collectAll(l, "agent/a")); n != 1 {
			t.Fatalf("%s: agent/a holds %d entries after a refused append", c.name, n)
		}
	}
}
