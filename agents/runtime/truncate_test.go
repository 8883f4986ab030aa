package runtime

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jido-bus/jido-bus/bus"
)

// TestPrepareTruncateWaitsForABusyAgent: an agent with a directive still
// running cannot be snapshotted past it; PrepareTruncate waits, says so
// when its context ends, and goes ahead once the agent is idle. The
// truncated agent then restarts with its state and pending nothing.
func TestPrepareTruncateWaitsForABusyAgent(t *testing.T) {
	h := newHarness(t)
	h.start("probe", "p", Options{})
	h.mustCall("p", "probe.block", map[string]any{"name": "g"})
	head := func() uint64 {
		info, err := h.log.Stream("agent/p")
		if err != nil {
			t.Fatal(err)
		}
		return info.Head
	}
	before := head() + 1

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err := h.rt.PrepareTruncate(ctx, "agent/p", before, false)
	if bus.ErrorType(err) != ReasonTruncateRefused || !strings.Contains(err.Error(), "stayed busy") {
		t.Fatalf("prepare with a directive running: %v", err)
	}
	if err := CheckTruncate(h.log, "agent/p", before); bus.ErrorType(err) != ReasonTruncateRefused {
		t.Fatalf("check with a directive running: %v", err)
	}
	if err := h.rt.PrepareTruncate(context.Background(), "agent/p", before, true); err != nil {
		t.Fatalf("dry run of a truncation a snapshot would make safe: %v", err)
	}

	h.open("g")
	if err := h.rt.PrepareTruncate(context.Background(), "agent/p", before, false); err != nil {
		t.Fatalf("prepare once idle: %v", err)
	}
	before = head() + 1 // the directive's outcome was recorded meanwhile
	if err := CheckTruncate(h.log, "agent/p", before); err != nil {
		t.Fatalf("check after the snapshot: %v", err)
	}
	if _, err := h.log.TruncateBefore(context.Background(), "agent/p", before); err != nil {
		t.Fatal(err)
	}
	if n := h.restart(); n != 1 {
		t.Fatalf("recovered %d agents after the truncation", n)
	}
	info, err := h.rt.State("p")
	if err != nil || info.Version != 1 {
		t.Fatalf("p after truncation and restart: %+v %v", info, err)
	}
	h.mustCall("p", "probe.emit", map[string]any{"n": 1})
}
