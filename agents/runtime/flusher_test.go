package runtime

import (
	"context"
	"testing"
	"time"

	"github.com/jido-bus/jido-bus/bus/natsserver/natstest"
)

// TestEmitFlusher: a mark is confirmed only by a flush that began after
// it, every message published before the mark has then reached the
// server, and a connection that cannot flush fails the wait instead of
// confirming.
func TestEmitFlusher(t *testing.T) {
	srv := natstest.RunServer(t)
	pub, sub := natstest.Connect(t, srv), natstest.Connect(t, srv)
	got, err := sub.SubscribeSync("x")
	if err != nil {
		t.Fatal(err)
	}
	if err := sub.Flush(); err != nil {
		t.Fatal(err)
	}
	f := newEmitFlusher(pub)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); f.run(ctx) }()
	defer func() { cancel(); <-done }()

	for i := range 50 {
		if err := pub.Publish("x", []byte{byte(i)}); err != nil {
			t.Fatal(err)
		}
		g := f.mark()
		if err := f.wait(ctx, g); err != nil {
			t.Fatal(err)
		}
		if !f.confirmed(g) {
			t.Fatal("wait returned before the mark was confirmed")
		}
		// The server has the message: the subscriber gets it.
		m, err := got.NextMsg(5 * time.Second)
		if err != nil || m.Data[0] != byte(i) {
			t.Fatalf("message %d after its mark was confirmed: %v %v", i, m, err)
		}
	}
	if g := f.gen.Load(); f.confirmed(g) {
		t.Fatalf("generation %d confirmed before any flush began after it", g)
	}

	pub.Close()
	g := f.mark()
	wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
	defer wcancel()
	if err := f.wait(wctx, g); err == nil || f.confirmed(g) {
		t.Fatalf("a closed connection confirmed generation %d (err %v)", g, err)
	}
}

// TestEmitFlusherWithoutNATS: without a connection nothing waits.
func TestEmitFlusherWithoutNATS(t *testing.T) {
	f := newEmitFlusher(nil)
	g := f.mark()
	if !f.confirmed(g) || f.wait(context.Background(), g) != nil {
		t.Fatal("without NATS a mark must be confirmed at once")
	}
}
