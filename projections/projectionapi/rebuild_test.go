package projectionapi

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jido-bus/jido-bus/bus/natsserver/natstest"
	"github.com/jido-bus/jido-bus/conversation/views"
	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/jido-bus/jido-bus/internal/testkit"
	"github.com/jido-bus/jido-bus/projections"
)

// TestRebuildEndsOnALogWithoutConversations is issue 11 defect 13 through
// the API: on a log with no conversation event a rebuild never caught up,
// neither in a running node (Run) nor on a data dir (CatchUp).
func TestRebuildEndsOnALogWithoutConversations(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	dir := t.TempDir()
	l, store := openLogAndStore(t, dir)
	for i := range 3 {
		if _, err := l.Append(ctx, "agent/c1", eventlog.AnyVersion, event(t, "counter.increment", fmt.Sprintf("e%d", i), `{"by":1}`)); err != nil {
			t.Fatal(err)
		}
	}
	r, err := projections.NewRunner(l, store, projections.Options{}, views.Projections(views.Options{})...)
	if err != nil {
		t.Fatal(err)
	}
	local := Local{Runner: r}
	caughtUp := func() bool {
		ls, err := local.List(ctx, ListRequest{})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range ls.Projections {
			if p.Rebuilding || p.Lag != 0 {
				return false
			}
		}
		return true
	}

	// On a data dir: the request, then the fold.
	if _, err := local.Rebuild(ctx, RebuildRequest{Name: views.ViewTimeline}); err != nil {
		t.Fatal(err)
	}
	if err := r.CatchUp(ctx, nil); err != nil {
		t.Fatalf("CatchUp after a rebuild request: %v", err)
	}
	if !caughtUp() {
		t.Fatalf("after CatchUp: %+v", r.Status())
	}

	// In a node: the runner follows, the request comes over NATS.
	runCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := r.Run(runCtx); err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	defer func() { stop(); wg.Wait() }()
	srv := natstest.RunServer(t)
	nc := natstest.Connect(t, srv)
	serve(t, nc, local)
	if _, err := (Client{NC: nc}).Rebuild(ctx, RebuildRequest{Name: views.ViewStatus}); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, "the rebuild over NATS to catch up", caughtUp)
}
