package assistant

import (
	"context"
	"sync/atomic"
	"testing"
)

// TestCloseWaitsForTheWorkInFlight: Close cancels the work the executors
// started and returns once it has ended, with nothing left in flight.
func TestCloseWaitsForTheWorkInFlight(t *testing.T) {
	a := New(Config{})
	started := make(chan struct{})
	var ended atomic.Bool
	a.start("p1/c1", "r1", func(ctx context.Context) {
		close(started)
		<-ctx.Done()
		ended.Store(true)
	})
	<-started
	a.Close()
	if !ended.Load() {
		t.Fatal("Close returned while the work it cancelled still ran")
	}
	if n := inflight(a); n != 0 {
		t.Fatalf("%d conversations with work in flight after Close, want 0", n)
	}
}

// TestStartAfterCloseRunsNothing: work started once Close has begun (an
// executor the runtime runs while the node stops) does not run, outside
// the wait of Close or at all, and leaves nothing in flight: the
// restart records it interrupted, as it does the work Close stopped.
func TestStartAfterCloseRunsNothing(t *testing.T) {
	a := New(Config{})
	a.Close()
	var ran atomic.Bool
	a.start("p1/c1", "r1", func(context.Context) { ran.Store(true) })
	// A second Close waits for whatever the start began.
	a.Close()
	if ran.Load() {
		t.Fatal("work started after Close ran")
	}
	if n := inflight(a); n != 0 {
		t.Fatalf("%d conversations with work in flight after a refused start, want 0", n)
	}
}

func inflight(a *Assistant) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.inflight)
}
