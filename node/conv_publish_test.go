package node

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/codec"
	"github.com/jido-bus/jido-bus/conversation"
	"github.com/jido-bus/jido-bus/eventlog"
)

// TestConvEventsArePublishedAfterCommit: a conv send's committed events
// (conversation.started, conversation.user.message) come out on
// jido.emit.<key>.<type> as CloudEvents with the stream and the stream
// sequence the log gave them; the runtime's own entries of the stream
// (jido.*) do not.
func TestConvEventsArePublishedAfterCommit(t *testing.T) {
	n := startNode(t, t.TempDir())
	defer n.Close(5 * time.Second)
	nc, err := nats.Connect(n.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	sub, err := nc.SubscribeSync("jido.emit.p1/c1.>")
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	startOutsideDriven(t, n, "p1/c1")
	reply, err := n.convSend(context.Background(), []byte(`{"conv":"p1/c1","text":"hello"}`))
	if err != nil {
		t.Fatal(err)
	}
	sentID := reply.(map[string]any)["id"].(string)

	want := map[string]uint64{} // id → seq, from the log
	var wantTypes []string
	for e, err := range n.Log().ReadStream("conversation/p1/c1", eventlog.ReadOptions{Types: conversation.TypePattern}) {
		if err != nil {
			t.Fatal(err)
		}
		want[e.Event.ID()] = e.Seq
		wantTypes = append(wantTypes, e.Event.Type())
	}
	if len(wantTypes) != 2 || wantTypes[1] != conversation.UserMessage {
		t.Fatalf("log holds %v, want started and the user message", wantTypes)
	}
	dec := codec.Decoder{}
	next := func(wait time.Duration) (*nats.Msg, error) {
		for {
			msg, err := sub.NextMsg(wait)
			// The runtime's lifecycle emits (jido.agent.started) share
			// the subject space; they carry no Jido-Seq.
			if err != nil || !strings.HasPrefix(msg.Subject, "jido.emit.p1/c1.jido.") {
				return msg, err
			}
			if msg.Header.Get(HeaderSeq) != "" {
				t.Fatalf("%s carries Jido-Seq", msg.Subject)
			}
		}
	}
	for i, typ := range wantTypes {
		msg, err := next(10 * time.Second)
		if err != nil {
			t.Fatalf("message %d (%s): %v", i, typ, err)
		}
		if msg.Subject != "jido.emit.p1/c1."+typ {
			t.Fatalf("message %d on %s, want jido.emit.p1/c1.%s", i, msg.Subject, typ)
		}
		ev, _, err := dec.Decode(msg, "")
		if err != nil {
			t.Fatalf("message %d is no CloudEvent: %v", i, err)
		}
		if got := msg.Header.Get(HeaderSeq); got != strconv.FormatUint(want[ev.ID()], 10) {
			t.Fatalf("%s %s: Jido-Seq %q, want %d", typ, ev.ID(), got, want[ev.ID()])
		}
		if got := msg.Header.Get(HeaderStream); got != "conversation/p1/c1" {
			t.Fatalf("Jido-Stream %q", got)
		}
		if typ == conversation.UserMessage && ev.ID() != sentID {
			t.Fatalf("user message published with id %s, sent %s", ev.ID(), sentID)
		}
	}
	if msg, err := next(100 * time.Millisecond); err == nil {
		t.Fatalf("unexpected message %s %v", msg.Subject, msg.Header)
	}
}

// publisherLog opens a log of its own and a publisher on it whose NATS is
// the function given.
func publisherLog(t *testing.T, publish func(*nats.Msg) error) (*eventlog.Log, *convPublisher) {
	t.Helper()
	l, err := eventlog.Open(t.TempDir(), eventlog.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	subjects, _ := bus.NewSubjects("")
	p, err := newConvPublisher(l, subjects, publish, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	p.start()
	t.Cleanup(func() {
		p.close()
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
	p, err := newConvPublisher(l, subjects, func(msg *nats.Msg) error { rec.take(msg); return nil }, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	p.start()
	appendUserMessages(t, l, "conversation/p/a", 2)
	rec.wait(t, 2)
	p.close()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	checkSeqs(t, rec.seqs["conversation/p/a"], 4, 5)
}

// TestConvCatchUpSwitchOver is the client's recipe, with messages
// arriving all along: subscribe to jido.emit.<key>.>, read the log's
// conversation events up to seq N, then take the live messages with
// Jido-Seq > N. The result is every conversation event of the stream,
// once each, in order.
func TestConvCatchUpSwitchOver(t *testing.T) {
	n := startNode(t, t.TempDir())
	defer n.Close(5 * time.Second)
	ctx := context.Background()
	const total = 150
	halfway := make(chan struct{})
	sent := make(chan error, 1)
	startOutsideDriven(t, n, "p1/c1")
	go func() {
		for i := range total {
			if _, err := n.convSend(ctx, fmt.Appendf(nil, `{"conv":"p1/c1","text":"m%d"}`, i)); err != nil {
				sent <- err
				return
			}
			if i == total/3 {
				close(halfway)
			}
		}
		sent <- nil
	}()
	<-halfway

	nc, err := nats.Connect(n.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	live, err := nc.SubscribeSync("jido.emit.p1/c1.>")
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil { // the server has the subscription
		t.Fatal(err)
	}
	var seen []uint64
	for e, err := range n.Log().ReadStream("conversation/p1/c1", eventlog.ReadOptions{Types: conversation.TypePattern}) {
		if err != nil {
			t.Fatal(err)
		}
		seen = append(seen, e.Seq)
	}
	if len(seen) == 0 {
		t.Fatal("nothing in the log at the switch-over")
	}
	last := seen[len(seen)-1]
	if err := <-sent; err != nil {
		t.Fatal(err)
	}
	var all []uint64
	for e, err := range n.Log().ReadStream("conversation/p1/c1", eventlog.ReadOptions{Types: conversation.TypePattern}) {
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, e.Seq)
	}
	end := all[len(all)-1]
	dropped := 0
	for last < end {
		msg, err := live.NextMsg(10 * time.Second)
		if err != nil {
			t.Fatalf("live after seq %d of %d: %v", last, end, err)
		}
		if msg.Header.Get(HeaderSeq) == "" {
			continue // no log entry: a delta, or the runtime's lifecycle emit
		}
		seq, err := strconv.ParseUint(msg.Header.Get(HeaderSeq), 10, 64)
		if err != nil {
			t.Fatalf("%s: Jido-Seq %q: %v", msg.Subject, msg.Header.Get(HeaderSeq), err)
		}
		if seq <= last {
			dropped++
			continue
		}
		seen = append(seen, seq)
		last = seq
	}
	if fmt.Sprint(seen) != fmt.Sprint(all) {
		t.Fatalf("log then live gave %v\nthe log holds %v", seen, all)
	}
	t.Logf("%d events; %d live messages dropped as already read", len(all), dropped)
}
