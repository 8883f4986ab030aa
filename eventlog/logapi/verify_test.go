package logapi

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/natsserver/natstest"
	"github.com/jido-bus/jido-bus/eventlog"
)

// TestVerifyDoesNotBlockOtherRequests holds a verify in the middle of its
// scan (its progress hook waits) and checks that reads, stream listings
// and a second verify are answered meanwhile; then lets it finish.
func TestVerifyDoesNotBlockOtherRequests(t *testing.T) {
	ctx := context.Background()
	l, err := eventlog.Open("db", eventlog.Options{FS: vfs.NewMem()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	// Enough entries (two copies each) for Verify to report progress
	// before it ends.
	events := make([]bus.Signal, 5000)
	for i := range events {
		events[i] = signal(t, "user.created", fmt.Sprintf("e%d", i))
	}
	if _, err := l.Append(ctx, "agent/a", eventlog.AnyVersion, events...); err != nil {
		t.Fatal(err)
	}
	inScan := make(chan struct{})
	release := make(chan struct{})
	first := true
	srv := natstest.RunServer(t)
	serve(t, natstest.Connect(t, srv), Local{Log: l, VerifyProgress: func(uint64) {
		if first {
			first = false
			close(inScan)
			<-release
		}
	}}, bus.Subjects{}, nil)
	c := Client{NC: natstest.Connect(t, srv), Timeout: 5 * time.Second}

	verified := make(chan error, 1)
	go func() {
		report, err := c.Verify(ctx, VerifyRequest{})
		if err == nil && (!report.OK() || report.StreamEntries != 5000) {
			err = fmt.Errorf("report %+v", report)
		}
		verified <- err
	}()
	<-inScan
	// The verify is now parked inside its scan.
	page, err := c.Read(ctx, ReadRequest{Stream: "agent/a", Limit: 3})
	if err != nil || len(page.Entries) != 3 {
		close(release)
		t.Fatalf("read during a verify = %+v, %v", page, err)
	}
	if _, err := c.Streams(ctx, StreamsRequest{}); err != nil {
		close(release)
		t.Fatalf("streams during a verify: %v", err)
	}
	// A second verify is refused at once rather than queued behind it.
	if _, err := c.Verify(ctx, VerifyRequest{}); bus.ErrorType(err) != bus.ReasonQueueOverflow {
		close(release)
		t.Fatalf("second verify: %v, want %s", err, bus.ReasonQueueOverflow)
	}
	close(release)
	if err := <-verified; err != nil {
		t.Fatalf("verify: %v", err)
	}
}

// TestCloseStopsARunningVerify: shutting the Bus down cancels a verify in
// progress and waits for it (goleak checks nothing is left).
func TestCloseStopsARunningVerify(t *testing.T) {
	ctx := context.Background()
	l, err := eventlog.Open("db", eventlog.Options{FS: vfs.NewMem()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	events := make([]bus.Signal, 5000)
	for i := range events {
		events[i] = signal(t, "user.created", fmt.Sprintf("e%d", i))
	}
	if _, err := l.Append(ctx, "agent/a", eventlog.AnyVersion, events...); err != nil {
		t.Fatal(err)
	}
	inScan := make(chan struct{})
	var once bool
	srv := natstest.RunServer(t)
	b := serve(t, natstest.Connect(t, srv), Local{Log: l, VerifyProgress: func(uint64) {
		if !once {
			once = true
			close(inScan)
		}
	}}, bus.Subjects{}, nil)
	c := Client{NC: natstest.Connect(t, srv)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = c.Verify(ctx, VerifyRequest{})
	}()
	<-inScan
	if err := b.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	<-done
}
