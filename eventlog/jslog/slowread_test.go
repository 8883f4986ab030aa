package jslog

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jido-bus/jido-bus/eventlog"
)

// slowStream answers every message read late, as servers on a starved
// machine do.
type slowStream struct {
	jetstream.Stream
	delay time.Duration
}

func (s slowStream) GetMsg(ctx context.Context, seq uint64, opts ...jetstream.GetMsgOpt) (*jetstream.RawStreamMsg, error) {
	select {
	case <-time.After(s.delay):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return s.Stream.GetMsg(ctx, seq, opts...)
}

// TestLongStreamReadOnSlowServers: a stream read for the first time takes
// a request per message. Each has its own Timeout, so a stream whose
// requests are each answered in time reads in full however long they
// take together (before, one Timeout bounded them all: a partition
// acquired on a loaded machine failed on its long streams, and bounced
// between nodes).
func TestLongStreamReadOnSlowServers(t *testing.T) {
	ctx := t.Context()
	l, nc := openLog(t, Options{})
	const n = 12
	for i := range n {
		if _, err := l.Append(ctx, "agent/slow", eventlog.AnyVersion, sig("user.said", fmt.Sprintf("s%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	// A second Log of the same prefix has read nothing yet; its requests
	// take 100 ms each, n of them more than its Timeout.
	cold := openOn(t, nc, Options{Prefix: l.opts.Prefix, Partitions: l.opts.Partitions, Timeout: time.Second})
	part := Partition("agent/slow", l.opts.Partitions)
	cold.parts[part] = slowStream{Stream: cold.parts[part], delay: 100 * time.Millisecond}
	read := 0
	for e, err := range cold.ReadStream("agent/slow", eventlog.ReadOptions{}) {
		if err != nil {
			t.Fatalf("after %d entries: %v", read, err)
		}
		if want := fmt.Sprintf("s%d", read); e.Event.ID() != want {
			t.Fatalf("entry %d is %s; want %s", read, e.Event.ID(), want)
		}
		read++
	}
	if read != n {
		t.Fatalf("read %d entries; want %d", read, n)
	}
}
