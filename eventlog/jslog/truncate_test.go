package jslog

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/eventlog"
)

// TestTruncateBefore: whole appends below the cut are purged from the
// subject (an append straddling it stays whole); the stream keeps its
// version and goes on from it; a fresh Log (another node, a restart)
// reads it from its first entry kept; a read from below is gone; Stream
// and Verify describe what is left; a dry run changes nothing.
func TestTruncateBefore(t *testing.T) {
	l, nc := openLog(t, Options{})
	ctx := context.Background()
	mustAppend(t, l, "agent/t", eventlog.NoStream, sig("t.x", "1"))
	mustAppend(t, l, "agent/t", eventlog.ExactVersion(1), sig("t.x", "2"), sig("t.x", "3"))
	mustAppend(t, l, "agent/t", eventlog.ExactVersion(3), sig("t.x", "4"))
	mustAppend(t, l, "agent/t", eventlog.ExactVersion(4), sig("t.x", "5"))
	mustAppend(t, l, "agent/other", eventlog.NoStream, sig("t.x", "o1")) // another subject: untouched

	dry, err := l.TruncateBefore(ctx, "agent/t", 3, true)
	if err != nil {
		t.Fatal(err)
	}
	// Version 3 is in the append 2-3: only version 1 can go.
	if dry.Removed != 1 || dry.From != 1 || dry.To != 1 || dry.Bytes == 0 || dry.KeptBefore != 2 {
		t.Fatalf("dry run %+v, want version 1 (the append holding 3 stays whole)", dry)
	}
	if n := len(collectAll(l, "agent/t")); n != 5 {
		t.Fatalf("after a dry run the stream holds %d entries, want 5", n)
	}
	r, err := l.TruncateBefore(ctx, "agent/t", 4, false)
	if err != nil {
		t.Fatal(err)
	}
	if r.Removed != 3 || r.From != 1 || r.To != 3 {
		t.Fatalf("truncate before 4: %+v, want versions 1-3", r)
	}
	check := func(l *Log, first uint64, want []string) {
		t.Helper()
		if diff := cmp.Diff(want, ids(collect(t, l.ReadStream("agent/t", eventlog.ReadOptions{})))); diff != "" {
			t.Fatalf("stream (-want +got):\n%s", diff)
		}
		info, err := l.Stream("agent/t")
		if head := first + uint64(len(want)) - 1; err != nil || info.First != first || info.Head != head {
			t.Fatalf("Stream: %+v, %v; want first %d, head %d", info, err, first, head)
		}
	}
	check(l, 4, []string{"4", "5"})
	fresh := openOn(t, nc, Options{Prefix: l.opts.Prefix, Partitions: l.opts.Partitions})
	check(fresh, 4, []string{"4", "5"})
	for e, err := range fresh.ReadStream("agent/t", eventlog.ReadOptions{From: 2}) {
		if _, ok := errors.AsType[*eventlog.GoneError](err); !ok {
			t.Fatalf("read from version 2: %+v, %v; want gone", e, err)
		}
		break
	}
	// Versions go on from the head, on the fresh Log too.
	if res := mustAppend(t, fresh, "agent/t", eventlog.ExactVersion(5), sig("t.x", "6")); res.Version != 6 {
		t.Fatalf("append after truncation: %+v, want version 6", res)
	}
	check(l, 4, []string{"4", "5", "6"})
	rep, err := fresh.Verify(ctx, nil)
	if err != nil || len(rep.Damaged) != 0 {
		t.Fatalf("verify after truncation: %+v, %v", rep, err)
	}
	if diff := cmp.Diff([]string{"o1"}, ids(collectAll(l, "agent/other"))); diff != "" {
		t.Fatalf("the other stream of the partition (-want +got):\n%s", diff)
	}

	// Past the head: everything but the last message goes, so the
	// version and the fence stay.
	if r, err := l.TruncateBefore(ctx, "agent/t", 100, false); err != nil || r.From != 4 || r.To != 5 {
		t.Fatalf("truncate past the head: %+v, %v; want 4-5 (the last message stays)", r, err)
	}
	check(fresh, 6, []string{"6"})
	if r, err := l.TruncateBefore(ctx, "agent/t", 100, false); err != nil || r.Removed != 0 {
		t.Fatalf("truncate with only the last message left: %+v, %v; want nothing removed", r, err)
	}
	if _, err := l.TruncateBefore(ctx, "agent/none", 2, false); !errors.Is(err, eventlog.ErrNotFound) {
		t.Fatalf("truncate of a stream with no entry: %v, want not found", err)
	}
}

// TestTruncateKeepsTheFence: a stale writer (it saw the stream before
// another node appended and truncated) still has its append refused:
// the purge keeps the subject's last message, whose sequence is not the
// one the stale writer expects.
func TestTruncateKeepsTheFence(t *testing.T) {
	old, nc := openLog(t, Options{})
	mustAppend(t, old, "agent/f", eventlog.NoStream, sig("t.x", "1"))
	next := openOn(t, nc, Options{Prefix: old.opts.Prefix, Partitions: old.opts.Partitions})
	collectAll(next, "agent/f")
	mustAppend(t, next, "agent/f", eventlog.ExactVersion(1), sig("t.x", "2"))
	mustAppend(t, next, "agent/f", eventlog.ExactVersion(2), sig("t.x", "3"))
	if r, err := next.TruncateBefore(context.Background(), "agent/f", 100, false); err != nil || r.To != 2 {
		t.Fatalf("truncate: %+v, %v", r, err)
	}
	_, err := old.Append(context.Background(), "agent/f", eventlog.ExactVersion(1), sig("t.x", "stale"))
	if ae, ok := errors.AsType[*eventlog.AppendError](err); !ok || ae.Actual != 3 {
		t.Fatalf("stale append after truncation: %v, want an AppendError at version 3", err)
	}
	// An append that expects any version is fenced too, and lands after
	// the head, never at a version already used.
	res, err := old.Append(context.Background(), "agent/f", eventlog.AnyVersion, sig("t.x", "4"))
	if err != nil || res.Version != 4 {
		t.Fatalf("append at any version after the refusal: %+v, %v; want version 4", res, err)
	}
	if s := old.Stats(); s.Fenced == 0 {
		t.Fatalf("stats %+v: the stale append was not refused by the server's fence", s)
	}
}

// TestTruncateRefusesDenyPurge: a partition stream made with deny_purge
// (which JetStream cannot turn off) is refused, naming the setting.
func TestTruncateRefusesDenyPurge(t *testing.T) {
	l, nc := openLog(t, Options{})
	mustAppend(t, l, "agent/p", eventlog.NoStream, sig("t.x", "1"))
	mustAppend(t, l, "agent/p", eventlog.ExactVersion(1), sig("t.x", "2"))
	js, _ := jetstream.New(nc)
	cfg := l.partitionConfig(Partition("agent/p", l.opts.Partitions))
	cfg.DenyPurge = true
	if _, err := js.UpdateStream(t.Context(), cfg); err != nil {
		t.Fatal(err)
	}
	_, err := l.TruncateBefore(context.Background(), "agent/p", 2, false)
	if bus.ErrorType(err) != bus.ReasonForbidden || !strings.Contains(err.Error(), "deny_purge") {
		t.Fatalf("truncate on a deny_purge stream: %v, want forbidden naming deny_purge", err)
	}
	if n := len(collectAll(l, "agent/p")); n != 2 {
		t.Fatalf("the stream holds %d entries, want 2", n)
	}
}
