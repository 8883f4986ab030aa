package jslog

import (
	"context"
	"errors"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jido-bus/jido-bus/eventlog"
)

// TestReadStreamVersions: appends of several events take consecutive
// versions, and every read option selects by version across message
// boundaries.
func TestReadStreamVersions(t *testing.T) {
	l, _ := openLog(t, Options{})
	mustAppend(t, l, "agent/r", eventlog.NoStream, sig("a.x", "1"), sig("b.x", "2"), sig("a.x", "3"))
	res := mustAppend(t, l, "agent/r", eventlog.ExactVersion(3), sig("b.x", "4"))
	if res.Version != 4 || res.Positions[0].Seq != 4 {
		t.Fatalf("second append: %+v", res)
	}
	mustAppend(t, l, "agent/r", eventlog.ExactVersion(4), sig("a.x", "5"), sig("a.x", "6"))
	cases := []struct {
		name string
		o    eventlog.ReadOptions
		want []string
	}{
		{"all", eventlog.ReadOptions{}, []string{"1", "2", "3", "4", "5", "6"}},
		{"from inside a message", eventlog.ReadOptions{From: 2}, []string{"2", "3", "4", "5", "6"}},
		{"from with limit", eventlog.ReadOptions{From: 3, Limit: 2}, []string{"3", "4"}},
		{"past the head", eventlog.ReadOptions{From: 7}, nil},
		{"backward", eventlog.ReadOptions{Backward: true}, []string{"6", "5", "4", "3", "2", "1"}},
		{"last one", eventlog.ReadOptions{Backward: true, Limit: 1}, []string{"6"}},
		{"backward from", eventlog.ReadOptions{Backward: true, From: 2}, []string{"2", "1"}},
		{"types", eventlog.ReadOptions{Types: "a.*"}, []string{"1", "3", "5", "6"}},
		{"types backward limited", eventlog.ReadOptions{Types: "b.*", Backward: true, Limit: 1}, []string{"4"}},
	}
	for _, c := range cases {
		entries := collect(t, l.ReadStream("agent/r", c.o))
		if diff := cmp.Diff(c.want, ids(entries)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", c.name, diff)
		}
		for _, e := range entries {
			if e.Event.ID() != itoaU(e.Seq) || e.Stream != "agent/r" || e.Time.IsZero() || e.Size == 0 {
				t.Errorf("%s: entry %+v does not carry its version, stream, time and size", c.name, e)
			}
		}
	}
	// A second Log, with nothing cached, reads the same.
	l2 := openOn(t, cluster.Connect(t), Options{Prefix: l.opts.Prefix, Partitions: l.opts.Partitions})
	if diff := cmp.Diff([]string{"4", "5", "6"}, ids(collect(t, l2.ReadStream("agent/r", eventlog.ReadOptions{From: 4})))); diff != "" {
		t.Errorf("fresh Log (-want +got):\n%s", diff)
	}
	for _, err := range l.ReadStream("agent/none", eventlog.ReadOptions{}) {
		if !errors.Is(err, eventlog.ErrNotFound) {
			t.Fatalf("unknown stream: err = %v, want ErrNotFound", err)
		}
	}
}

func itoaU(v uint64) string { return strconv.FormatUint(v, 10) }

func TestReadStreamRoundTripsEvents(t *testing.T) {
	l, _ := openLog(t, Options{})
	in := sig("t.x", "1")
	in.SetSubject("sub")
	in.SetExtension("correlationid", "c-1")
	mustAppend(t, l, "agent/e", eventlog.AnyVersion, in)
	got := collect(t, l.ReadStream("agent/e", eventlog.ReadOptions{}))
	if len(got) != 1 {
		t.Fatalf("read %d entries", len(got))
	}
	out := got[0].Event
	if out.ID() != in.ID() || out.Source() != in.Source() || out.Type() != in.Type() || out.Subject() != "sub" ||
		out.Extensions()["correlationid"] != "c-1" || string(out.Data()) != string(in.Data()) || !out.Time().Equal(in.Time()) {
		t.Fatalf("read back %v, wrote %v", out, in)
	}
}

func TestSnapshots(t *testing.T) {
	l, _ := openLog(t, Options{})
	ctx := context.Background()
	if _, err := l.LoadSnapshot("agent/s"); !errors.Is(err, eventlog.ErrNotFound) {
		t.Fatalf("no snapshot: err = %v, want ErrNotFound", err)
	}
	mustAppend(t, l, "agent/s", eventlog.AnyVersion, sig("t.x", "1"), sig("t.x", "2"))
	if err := l.SaveSnapshot(ctx, "agent/s", 3, []byte("x")); !errors.Is(err, eventlog.ErrWrongVersion) {
		t.Fatalf("snapshot above the head: err = %v, want ErrWrongVersion", err)
	}
	if err := l.SaveSnapshot(ctx, "agent/s", 1, []byte("one")); err != nil {
		t.Fatal(err)
	}
	if err := l.SaveSnapshot(ctx, "agent/s", 2, []byte("two")); err != nil {
		t.Fatal(err)
	}
	s, err := l.LoadSnapshot("agent/s")
	if err != nil || s.Version != 2 || string(s.Data) != "two" || s.Stream != "agent/s" {
		t.Fatalf("LoadSnapshot = %+v, %v; want the last one, version 2", s, err)
	}
	// Only the last snapshot of a stream is kept.
	info, err := l.snaps.Info(ctx)
	if err != nil || info.State.Msgs != 1 {
		t.Fatalf("snapshot stream holds %d messages (%v), want 1", info.State.Msgs, err)
	}
}
