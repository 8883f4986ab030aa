package jslog

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jido-bus/jido-bus/eventlog"
)

// TestTwoWritersOneWins: two Logs (two nodes) that both saw a stream at
// the same version append to it at once; in every round exactly one
// append lands and the other is refused with ErrWrongVersion.
func TestTwoWritersOneWins(t *testing.T) {
	a, _ := openLog(t, Options{})
	b := openOn(t, cluster.Connect(t), Options{Prefix: a.opts.Prefix, Partitions: a.opts.Partitions})
	ctx := context.Background()
	const rounds = 20
	for r := range rounds {
		head := uint64(r)
		// Both have seen the stream at head.
		collectAll(a, "agent/w")
		collectAll(b, "agent/w")
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i, l := range []*Log{a, b} {
			wg.Go(func() {
				_, errs[i] = l.Append(ctx, "agent/w", eventlog.ExactVersion(head), sig("t.x", fmt.Sprintf("r%d-w%d", r, i)))
			})
		}
		wg.Wait()
		won := 0
		for i, err := range errs {
			switch {
			case err == nil:
				won++
			case errors.Is(err, eventlog.ErrWrongVersion):
			default:
				t.Fatalf("round %d writer %d: %v", r, i, err)
			}
		}
		if won != 1 {
			t.Fatalf("round %d: %d writers won (%v)", r, won, errs)
		}
	}
	entries := collectAll(a, "agent/w")
	if len(entries) != rounds {
		t.Fatalf("the stream holds %d entries after %d rounds", len(entries), rounds)
	}
}

// TestStaleWriterIsFenced: a writer that appended, then lost the stream
// to another without knowing it, has its next append refused (its fence
// names a subject sequence that is no longer the last), writes nothing,
// and learns the stream's version from the refusal.
func TestStaleWriterIsFenced(t *testing.T) {
	old, _ := openLog(t, Options{})
	mustAppend(t, old, "agent/f", eventlog.NoStream, sig("t.x", "1"))
	next := openOn(t, cluster.Connect(t), Options{Prefix: old.opts.Prefix, Partitions: old.opts.Partitions})
	collectAll(next, "agent/f")
	mustAppend(t, next, "agent/f", eventlog.ExactVersion(1), sig("t.x", "2"))

	_, err := old.Append(context.Background(), "agent/f", eventlog.ExactVersion(1), sig("t.x", "stale"))
	ae, ok := errors.AsType[*eventlog.AppendError](err)
	if !ok || ae.Actual != 2 {
		t.Fatalf("stale append: err = %v, want an AppendError at version 2", err)
	}
	if diff := cmp.Diff([]string{"1", "2"}, ids(collectAll(next, "agent/f"))); diff != "" {
		t.Fatalf("stream (-want +got):\n%s", diff)
	}
	// With what the refusal taught it, the old writer appends at 2.
	if res := mustAppend(t, old, "agent/f", eventlog.ExactVersion(2), sig("t.x", "3")); res.Version != 3 {
		t.Fatalf("append after the refusal: %+v", res)
	}
}

// TestRetryAfterLostAckIsDuplicate: an append whose message was stored but
// whose acknowledgement never came back (here: published exactly as the
// Log would, reply dropped) is, when retried, answered as a duplicate by
// the server's Msg-Id window; nothing is written twice.
func TestRetryAfterLostAckIsDuplicate(t *testing.T) {
	l, nc := openLog(t, Options{})
	ctx := context.Background()
	mustAppend(t, l, "agent/d", eventlog.NoStream, sig("t.x", "1"))
	events := sigs("t.x", "2", "3")
	// The first attempt, as Append makes it, whose ack is lost.
	st := l.cache.acquire(l, "agent/d")
	p, err := plan([]eventlog.StreamAppend{{Stream: "agent/d", Expected: eventlog.ExactVersion(1), Events: events}}, map[string]*streamState{"agent/d": st})
	if err != nil {
		l.cache.release(st)
		t.Fatal(err)
	}
	m, err := l.message(p.msgs[0])
	l.cache.release(st)
	if err != nil {
		t.Fatal(err)
	}
	js, _ := jetstream.New(nc)
	if _, err := js.PublishMsg(ctx, m); err != nil {
		t.Fatal(err)
	}
	// The caller retries the same append.
	res, err := l.Append(ctx, "agent/d", eventlog.ExactVersion(1), events...)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Positions[0].Duplicate || !res.Positions[1].Duplicate || res.Positions[0].Seq != 2 || res.Positions[1].Seq != 3 || res.Version != 3 {
		t.Fatalf("retry: %+v, want duplicates at versions 2 and 3", res)
	}
	// The server recognised the retry by its Msg-Id (it checks that
	// before the fence), so the fence was never consulted.
	if s := l.Stats(); s.Duplicates != 1 || s.Fenced != 0 {
		t.Fatalf("stats %+v, want one duplicate answered by the server and no fence refusal", s)
	}
	if diff := cmp.Diff([]string{"1", "2", "3"}, ids(collectAll(l, "agent/d"))); diff != "" {
		t.Fatalf("stream (-want +got):\n%s", diff)
	}
	info, err := l.parts[Partition("agent/d", l.opts.Partitions)].Info(ctx, jetstream.WithSubjectFilter(l.Subject("agent/d")))
	if err != nil || info.State.Subjects[l.Subject("agent/d")] != 2 {
		t.Fatalf("subject holds %v messages (%v), want 2", info.State.Subjects, err)
	}
}

// TestIdempotentBeyondTheMsgIDWindow: a duplicate the server's Msg-Id
// window cannot see (here another writer stored the event under another
// message id) is still found: the fence is refused, the Log reads what it
// missed and answers the event as a duplicate.
func TestIdempotentBeyondTheMsgIDWindow(t *testing.T) {
	a, _ := openLog(t, Options{})
	mustAppend(t, a, "agent/i", eventlog.NoStream, sig("t.x", "1"))
	b := openOn(t, cluster.Connect(t), Options{Prefix: a.opts.Prefix, Partitions: a.opts.Partitions})
	mustAppend(t, b, "agent/i", eventlog.ExactVersion(1), sig("t.x", "x"), sig("t.x", "y"))
	// a's Msg-Id would name y, which b's message is not stored under.
	res, err := a.Append(context.Background(), "agent/i", eventlog.ExactVersion(1), sig("t.x", "y"))
	if err != nil || !res.Positions[0].Duplicate || res.Positions[0].Seq != 3 {
		t.Fatalf("append of a stored event: %+v, %v; want a duplicate at version 3", res, err)
	}
	if s := a.Stats(); s.Fenced != 1 || s.Duplicates != 0 {
		t.Fatalf("stats %+v, want one fence refusal (the duplicate was found by reading, not by the server)", s)
	}
	if n := len(collectAll(a, "agent/i")); n != 3 {
		t.Fatalf("the stream holds %d entries, want 3", n)
	}
}
