package runtime

import (
	"context"
	"strings"
	"testing"

	"github.com/jido-bus/jido-bus/bus"
)

// TestStartRefusesUnboundedOptions: options that would leave an agent's
// memory or recovery unbounded are refused at start, naming the option
// and the range it takes.
func TestStartRefusesUnboundedOptions(t *testing.T) {
	h := newHarness(t)
	for _, c := range []struct {
		opts   Options
		option string
	}{
		{Options{SnapshotEvery: -1}, "snapshot_every"},
		{Options{SnapshotEvery: MaxSnapshotEvery + 1}, "snapshot_every"},
		{Options{MaxQueueSize: -1}, "max_queue_size"},
		{Options{MaxQueueSize: MaxMaxQueueSize + 1}, "max_queue_size"},
		{Options{MaxQueueBytes: -1}, "max_queue_bytes"},
		{Options{MaxQueueBytes: MaxMaxQueueBytes + 1}, "max_queue_bytes"},
	} {
		_, err := h.rt.Start(context.Background(), StartRequest{Type: "counter", Options: c.opts})
		if bus.ErrorType(err) != bus.ReasonInvalidRequest || !strings.Contains(err.Error(), c.option) || !strings.Contains(err.Error(), "..") {
			t.Errorf("start with %+v: %v, want invalid_request naming %s and its range", c.opts, err, c.option)
		}
	}
}

// TestQueueBytesAreBounded: past max_queue_bytes an agent refuses new
// signals with queue_overflow before anything is committed, as past
// max_queue_size.
func TestQueueBytesAreBounded(t *testing.T) {
	h := newHarness(t)
	h.start("counter", "c1", Options{MaxQueueBytes: 64 << 10})
	g := h.gateAppends("c1")
	t.Cleanup(func() { // a failed test must not leave Close waiting at the gate
		select {
		case <-g.gate:
		default:
			close(g.gate)
		}
	})
	s := h.queueBehindCommit("c1", signal(t, "counter.increment", map[string]int{"by": 1}))
	big := func() bus.Signal {
		sig := signal(t, "counter.increment", map[string]int{"by": 1})
		sig.SetExtension("padding", strings.Repeat("x", 10<<10))
		return sig
	}
	accepted := 0
	var err error
	for range 20 {
		if err = h.rt.Cast("c1", big()); err != nil {
			break
		}
		accepted++
	}
	if bus.ErrorType(err) != bus.ReasonQueueOverflow || accepted < 4 || accepted > 7 {
		t.Fatalf("%d casts of 10 KiB accepted, then %v; want about 6, then queue_overflow", accepted, err)
	}
	close(g.gate)
	h.eventually("the accepted casts committed", func() bool { info, _ := h.rt.State("c1"); return info.Version == uint64(accepted)+1 })
	// The bytes of a signal stay counted while its directives wait in the
	// queue, so an empty inbox is not yet an empty queue.
	h.eventually("the queue empty", func() bool { s.mu.Lock(); defer s.mu.Unlock(); return s.queuedBytes == 0 })
	if err := h.rt.Cast("c1", big()); err != nil {
		t.Fatalf("once the queue emptied: %v", err)
	}
}
