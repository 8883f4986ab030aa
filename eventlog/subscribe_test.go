package eventlog

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

// TestSubscriptionCatchUpThenFollow appends while a subscription catches up
// and then follows, and checks it sees every entry once, in order.
func TestSubscriptionCatchUpThenFollow(t *testing.T) {
	for _, tc := range []struct {
		name   string
		stream string // "" follows the global log
		buffer int
	}{
		{"stream", "agent/a", 0},
		{"stream with a tiny buffer", "agent/a", 2},
		{"global log", "", 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := openMem(t, Options{})
			const before, during = 50, 200
			for i := range before {
				mustAppend(t, l, "agent/a", sig("t.x", fmt.Sprintf("x%d", i)))
			}
			sub, err := l.Subscribe(SubscribeOptions{Stream: tc.stream, From: 1, Buffer: tc.buffer})
			if err != nil {
				t.Fatal(err)
			}
			defer sub.Close()
			var wg sync.WaitGroup
			wg.Go(func() {
				for i := before; i < before+during; i++ {
					mustAppend(t, l, "agent/a", sig("t.x", fmt.Sprintf("x%d", i)))
				}
			})
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			for want := uint64(1); want <= before+during; want++ {
				e, err := sub.Next(ctx)
				if err != nil {
					t.Fatalf("next after %d: %v", want-1, err)
				}
				if e.Seq != want || e.GlobalSeq != want {
					t.Fatalf("got seq %d global %d, want %d", e.Seq, e.GlobalSeq, want)
				}
			}
			wg.Wait()
			if sub.Position() != before+during+1 {
				t.Fatalf("position %d", sub.Position())
			}
		})
	}
}

func TestSubscriptionFromNowAndFilter(t *testing.T) {
	l := openMem(t, Options{})
	mustAppend(t, l, "agent/a", sig("user.created", "old"))
	sub, err := l.Subscribe(SubscribeOptions{Types: "user.created"})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	mustAppend(t, l, "agent/b", sig("user.deleted", "skip"))
	mustAppend(t, l, "agent/c", sig("user.created", "new"))
	e, err := sub.Next(t.Context())
	if err != nil || e.Event.ID() != "new" || e.Stream != "agent/c" {
		t.Fatalf("next = %s %s, %v", e.Stream, e.Event.ID(), err)
	}
	// Nothing more: Next waits until the context ends.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := sub.Next(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("idle next: %v", err)
	}
}

func TestSubscriptionEnds(t *testing.T) {
	l := openMem(t, Options{})
	mustAppend(t, l, "agent/a", sigs("t.x", "a", 3)...)
	if _, err := l.TruncateBefore(t.Context(), "agent/a", 3); err != nil {
		t.Fatal(err)
	}
	gone, err := l.Subscribe(SubscribeOptions{Stream: "agent/a", From: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gone.Next(t.Context()); !errors.Is(err, ErrGone) {
		t.Fatalf("subscription from a truncated position: %v", err)
	}

	waiting, err := l.Subscribe(SubscribeOptions{Stream: "agent/new"})
	if err != nil {
		t.Fatal(err)
	}
	result := make(chan error, 1)
	go func() {
		_, err := waiting.Next(context.Background())
		result <- err
	}()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-result; !errors.Is(err, ErrClosed) {
		t.Fatalf("next across Close: %v", err)
	}
}
