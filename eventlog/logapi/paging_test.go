package logapi

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/jido-bus/jido-bus/bus"
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
