package convapi_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/conversation"
	"github.com/jido-bus/jido-bus/conversation/convapi"
	"github.com/jido-bus/jido-bus/conversation/views"
	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/jido-bus/jido-bus/projections"
)

// TestConvListLimits: a negative limit is a mistake and says so (it was
// read as "the default page"); the largest int lists every conversation
// (limit+1 overflowed into "no limit" before, which only happened to
// work); a page stops before its reply passes convapi.MaxReplyBytes, with Next
// set, so that a reply always fits NATS's max payload.
func TestConvListLimits(t *testing.T) {
	ctx := context.Background()
	l, store := openLogAndStore(t, t.TempDir())
	// Long project ids make each summary large: a few hundred pass the
	// reply budget.
	project := strings.Repeat("p", 900)
	const convs = 700
	for i := range convs {
		conv := fmt.Sprintf("c%03d", i)
		if _, err := l.Append(ctx, conversation.Stream(project+"/"+conv), eventlog.NoStream,
			event(t, conversation.Started, "e"+conv, fmt.Sprintf(`{"project_id":%q,"conversation_id":%q}`, project, conv))); err != nil {
			t.Fatal(err)
		}
	}
	r, err := projections.NewRunner(l, store, projections.Options{}, views.Projections(views.Options{})...)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.CatchUp(ctx, nil); err != nil {
		t.Fatal(err)
	}
	local := convapi.Reader{Runner: r, Log: l}
	for _, limit := range []int{-1, math.MinInt} {
		if _, err := local.List(ctx, convapi.ListRequest{Limit: limit}); !errors.Is(err, &bus.Error{Type: bus.ReasonInvalidRequest}) || !strings.Contains(err.Error(), "limit") {
			t.Errorf("limit %d: %v, want invalid_request naming the limit", limit, err)
		}
	}
	seen, pages := 0, 0
	req := convapi.ListRequest{Limit: math.MaxInt}
	for {
		rep, err := local.List(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		seen += len(rep.Conversations)
		if body, _ := bus.OKReply(rep); len(body) > convapi.MaxReplyBytes {
			t.Fatalf("page %d is %d bytes, over convapi.MaxReplyBytes %d", pages, len(body), convapi.MaxReplyBytes)
		}
		if rep.Next == "" {
			break
		}
		if len(rep.Conversations) == 0 || pages > convs {
			t.Fatalf("page %d: %d conversations, next %q: no progress", pages, len(rep.Conversations), rep.Next)
		}
		req.After = rep.Next
	}
	if seen != convs || pages < 2 {
		t.Fatalf("listed %d conversations in %d pages, want %d in more than one page", seen, pages, convs)
	}
}
