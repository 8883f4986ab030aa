package eventlog

import (
	"context"
	"testing"

	"github.com/jido-bus/jido-bus/bus"
)

// TestTryNextWithAFilterThatMatchesNothing: a subscriber filtering by type
// learns that it has read everything durable, even when nothing matched,
// instead of waiting for an entry of its own.
func TestTryNextWithAFilterThatMatchesNothing(t *testing.T) {
	l, err := Open(t.TempDir(), Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx := context.Background()
	for _, typ := range []string{"other.a", "mine.x", "other.b", "other.c"} {
		s, err := bus.NewSignal(typ, "test", nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.Append(ctx, "s", AnyVersion, s); err != nil {
			t.Fatal(err)
		}
	}
	sub, err := l.Subscribe(SubscribeOptions{From: 1, Types: "mine.**", Buffer: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	e, ok, err := sub.TryNext()
	if err != nil || !ok || e.Event.Type() != "mine.x" {
		t.Fatalf("TryNext = %v %v %v, want mine.x", e.Event.Type(), ok, err)
	}
	if _, ok, err := sub.TryNext(); ok || err != nil {
		t.Fatalf("TryNext after the last match = %v, %v", ok, err)
	}
	if got := sub.Position(); got != 5 {
		t.Fatalf("Position = %d, want 5 (past everything read)", got)
	}
}
