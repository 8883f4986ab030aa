package runtime

import (
	"context"
	"strings"
	"testing"

	"github.com/jido-bus/jido-bus/agents"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/internal/testkit"
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
	t.Cleanup(func() { // a failed test must not leave Shutdown waiting at the gate
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
	testkit.Eventually(h.t, "the accepted casts committed", func() bool { info, _ := h.rt.State("c1"); return info.Version == uint64(accepted)+1 })
	// The bytes of a signal stay counted while its directives wait in the
	// queue, so an empty inbox is not yet an empty queue.
	testkit.Eventually(h.t, "the queue empty", func() bool { s.mu.Lock(); defer s.mu.Unlock(); return s.queuedBytes == 0 })
	if err := h.rt.Cast("c1", big()); err != nil {
		t.Fatalf("once the queue emptied: %v", err)
	}
}

// TestOwnResultsPassAFullQueue: an executor's async result comes back to
// a full queue and is admitted (and decided), not refused: nobody would
// retry it, and a conversation whose model answer was refused waited for
// ever. Signals from outside are still refused past the bound.
func TestOwnResultsPassAFullQueue(t *testing.T) {
	delivered := make(chan error, 1)
	var h *harness // the executor runs once h is set
	h = newHarness(t, func(cfg *Config) {
		cfg.Executors["test_block"] = ExecFunc(func(ctx context.Context, d agents.Directive, x *ExecContext) (ExecResult, error) {
			name := d.(block).Name
			select {
			case <-h.gate(name):
			case <-ctx.Done():
				return ExecResult{}, ctx.Err()
			}
			if name == "first" {
				delivered <- x.Deliver(signal(t, "probe.tick", nil))
			}
			return ExecResult{}, nil
		})
	})
	h.start("probe", "p1", Options{MaxQueueSize: 3})
	h.mustCall("p1", "probe.block", map[string]any{"name": "first"})
	testkit.Eventually(h.t, "the first block running", func() bool { info, _ := h.rt.State("p1"); return info.QueueLength == 0 })
	for range 3 {
		h.mustCall("p1", "probe.block", map[string]any{"name": "rest"})
	}
	if err := h.rt.Cast("p1", signal(t, "probe.tick", nil)); bus.ErrorType(err) != bus.ReasonQueueOverflow {
		t.Fatalf("a cast from outside on a full queue: %v, want queue_overflow", err)
	}
	h.open("first")
	if err := <-delivered; err != nil {
		t.Fatalf("the executor's result on a full queue: %v, want it admitted", err)
	}
	h.open("rest")
	testkit.Eventually(h.t, "the result decided", func() bool { return h.state("p1")["ticks"] == 1.0 })
}
