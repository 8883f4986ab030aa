package logapi

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/eventlog"
)

// TestPageLimits: a negative limit is a mistake and says so (it was read
// as "the default page"); the largest int is a page bounded by the reply
// size, not an overflow.
func TestPageLimits(t *testing.T) {
	c, l := setup(t, bus.Subjects{})
	ctx := context.Background()
	for _, limit := range []int{-1, -5, math.MinInt} {
		_, err := c.Read(ctx, ReadRequest{Stream: "agent/a", Limit: limit})
		if !errors.Is(err, &bus.Error{Type: bus.ReasonInvalidRequest}) || !strings.Contains(err.Error(), "limit") {
			t.Errorf("limit %d: %v, want invalid_request naming the limit", limit, err)
		}
		if _, err := (Local{Log: l}).Read(ctx, ReadRequest{Limit: limit}); !errors.Is(err, &bus.Error{Type: bus.ReasonInvalidRequest}) {
			t.Errorf("Local.Read limit %d: %v, want invalid_request", limit, err)
		}
	}
	rep, err := c.Read(ctx, ReadRequest{Stream: "agent/a", Limit: math.MaxInt})
	if err != nil || len(rep.Entries) != 5 || rep.More {
		t.Fatalf("limit MaxInt: %d entries, more %v, %v; want the 5 entries", len(rep.Entries), rep.More, err)
	}
}

// TestStreamsPages: a node with more streams than one reply holds (tens of
// thousands of agents) lists them in pages, each reply within
// MaxReplyBytes, Next the After of the following page; before, the one
// reply passed NATS's max payload and was never sent.
func TestStreamsPages(t *testing.T) {
	c, l := setup(t, bus.Subjects{})
	ctx := context.Background()
	long := strings.Repeat("s", 900)
	const extra = 700
	for i := range extra {
		if _, err := l.Append(ctx, fmt.Sprintf("agent/%s%04d", long, i), eventlog.AnyVersion, signal(t, "user.created", fmt.Sprintf("x%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	seen, pages := map[string]bool{}, 0
	req := StreamsRequest{Prefix: "agent/"}
	for {
		rep, err := c.Streams(ctx, req)
		if err != nil {
			t.Fatalf("page %d: %v", pages+1, err)
		}
		pages++
		if body, _ := bus.OKReply(rep); len(body) > MaxReplyBytes {
			t.Fatalf("page %d is %d bytes, over MaxReplyBytes %d", pages, len(body), MaxReplyBytes)
		}
		for _, s := range rep.Streams {
			if seen[s.Stream] {
				t.Fatalf("page %d lists %s again", pages, s.Stream)
			}
			seen[s.Stream] = true
		}
		if rep.Next == "" {
			break
		}
		if len(rep.Streams) == 0 || pages > extra {
			t.Fatalf("page %d: no progress (next %q)", pages, rep.Next)
		}
		req.After = rep.Next
	}
	// agent/a and agent/b from setup, and the long ones.
	if len(seen) != extra+2 || pages < 2 {
		t.Fatalf("listed %d streams in %d pages, want %d in more than one", len(seen), pages, extra+2)
	}
}
