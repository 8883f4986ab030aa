package dispatch

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestWithPositionIsAContext: the context WithPosition makes behaves as
// context.WithValue's would — the parent's values, deadline and
// cancellation show through it, the innermost position wins, and
// contexts derived from it (values, cancels) still carry it.
func TestWithPositionIsAContext(t *testing.T) {
	type otherKey struct{}
	deadline := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	parent, cancel := context.WithDeadline(context.WithValue(context.Background(), otherKey{}, "v"), deadline)
	outer := WithPosition(parent, Position{Stream: "agent/a", Seq: 1})
	inner := WithPosition(outer, Position{Stream: "agent/b", Seq: 2, GlobalSeq: 3, Index: 4})
	if p, ok := PositionFrom(inner); !ok || p != (Position{Stream: "agent/b", Seq: 2, GlobalSeq: 3, Index: 4}) {
		t.Fatalf("PositionFrom(inner) = %v, %v", p, ok)
	}
	if p, ok := PositionFrom(outer); !ok || p.Stream != "agent/a" {
		t.Fatalf("PositionFrom(outer) = %v, %v", p, ok)
	}
	if _, ok := PositionFrom(parent); ok {
		t.Fatal("a context without a position has one")
	}
	if got := inner.Value(otherKey{}); got != "v" {
		t.Fatalf("the parent's value = %v", got)
	}
	if d, ok := inner.Deadline(); !ok || !d.Equal(deadline) {
		t.Fatalf("Deadline = %v, %v", d, ok)
	}
	derived, stop := context.WithCancel(context.WithValue(inner, otherKey{}, "w"))
	defer stop()
	if p, ok := PositionFrom(derived); !ok || p.Stream != "agent/b" {
		t.Fatalf("PositionFrom(derived) = %v, %v", p, ok)
	}
	if inner.Err() != nil || derived.Err() != nil {
		t.Fatal("done before the parent was cancelled")
	}
	cancel()
	<-derived.Done()
	if !errors.Is(inner.Err(), context.Canceled) || !errors.Is(derived.Err(), context.Canceled) {
		t.Fatalf("after cancel: %v, %v", inner.Err(), derived.Err())
	}
}
