package convapi

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/conversation"
	"github.com/jido-bus/jido-bus/eventlog"
)

// publisherLog opens a log of its own and a publisher on it whose NATS is
// the function given.
func publisherLog(t *testing.T, publish func(*nats.Msg) error) (*eventlog.Log, *Publisher) {
	t.Helper()
	l, err := eventlog.Open(t.TempDir(), eventlog.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	subjects, _ := bus.NewSubjects("")
	p, err := NewPublisher(l, subjects, publish, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	p.Start()
	t.Cleanup(func() {
		p.Close()
		_ = l.Close()
	})
	return l, p
}

func appendUserMessages(t *testing.T, l *eventlog.Log, stream string, count int) {
	t.Helper()
	for i := range count {
		ev, err := bus.NewSignal(conversation.UserMessage, "test", map[string]any{"text": fmt.Sprint(i)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.Append(context.Background(), stream, eventlog.AnyVersion, ev); err != nil {
			t.Fatal(err)
		}
	}
}

// recorder collects the sequences published, per stream.
type recorder struct {
	mu   sync.Mutex
	seqs map[string][]uint64
	got  chan struct{} // a value per message taken
}

func newRecorder() *recorder {
	return &recorder{seqs: map[string][]uint64{}, got: make(chan struct{}, 10000)}
}

func (r *recorder) take(msg *nats.Msg) {
	seq, _ := strconv.ParseUint(msg.Header.Get(HeaderSeq), 10, 64)
	r.mu.Lock()
	r.seqs[msg.Header.Get(HeaderStream)] = append(r.seqs[msg.Header.Get(HeaderStream)], seq)
	r.mu.Unlock()
	r.got <- struct{}{}
}

func (r *recorder) wait(t *testing.T, count int) {
	t.Helper()
	for i := range count {
		select {
		case <-r.got:
		case <-time.After(10 * time.Second):
			t.Fatalf("%d of %d messages published", i, count)
		}
	}
}

func checkSeqs(t *testing.T, got []uint64, first, last uint64) {
	t.Helper()
	if len(got) != int(last-first+1) {
		t.Fatalf("published %d sequences %v, want %d..%d", len(got), got, first, last)
	}
	for i, s := range got {
		if s != first+uint64(i) {
			t.Fatalf("published sequences %v, want %d..%d in order, none skipped or repeated", got, first, last)
		}
	}
}

// TestConvPublisherRetriesWithoutSkipping: while NATS refuses messages
// (closed, its reconnect buffer full) the publisher retries the same
// event; once NATS takes them again every event is published, in order,
// none skipped. Events of other streams are not published.
func TestConvPublisherRetriesWithoutSkipping(t *testing.T) {
	rec := newRecorder()
	var mu sync.Mutex
	failures := 0
	down := true
	l, _ := publisherLog(t, func(msg *nats.Msg) error {
		mu.Lock()
		defer mu.Unlock()
		if down {
			failures++
			if failures == 5 {
				down = false
			}
			return nats.ErrReconnectBufExceeded
		}
		rec.take(msg)
		return nil
	})
	appendUserMessages(t, l, "conversation/p/a", 20)
	appendUserMessages(t, l, "counter-1", 3) // not a conversation's stream
	appendUserMessages(t, l, "conversation/p/b", 7)
	rec.wait(t, 27)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	checkSeqs(t, rec.seqs["conversation/p/a"], 1, 20)
	checkSeqs(t, rec.seqs["conversation/p/b"], 1, 7)
	if len(rec.seqs) != 2 {
		t.Fatalf("streams published: %v", rec.seqs)
	}
}

// TestConvPublisherNeverBlocksCommits: a publisher stuck on NATS does
// not hold up a single append; once NATS moves again it catches up from
// the log, every event in order.
func TestConvPublisherNeverBlocksCommits(t *testing.T) {
	rec := newRecorder()
	release := make(chan struct{})
	l, _ := publisherLog(t, func(msg *nats.Msg) error {
		<-release
		rec.take(msg)
		return nil
	})
	const count = 2000 // far more than the subscription's buffer
	appendUserMessages(t, l, "conversation/p/a", count)
	close(release)
	rec.wait(t, count)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	checkSeqs(t, rec.seqs["conversation/p/a"], 1, count)
}

// TestConvPublisherStartsAtTheHead: events committed before the node
// started are not published again (a client reads them from the log).
func TestConvPublisherStartsAtTheHead(t *testing.T) {
	dir := t.TempDir()
	l, err := eventlog.Open(dir, eventlog.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	appendUserMessages(t, l, "conversation/p/a", 3)
	rec := newRecorder()
	subjects, _ := bus.NewSubjects("")
	p, err := NewPublisher(l, subjects, func(msg *nats.Msg) error { rec.take(msg); return nil }, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	p.Start()
	appendUserMessages(t, l, "conversation/p/a", 2)
	rec.wait(t, 2)
	p.Close()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	checkSeqs(t, rec.seqs["conversation/p/a"], 4, 5)
}
