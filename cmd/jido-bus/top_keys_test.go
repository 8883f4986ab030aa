package main

import (
	"context"
	"io"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/internal/testkit"
)

// TestTopQuitsOnQ: top reading keys from a terminal stops at q, and at
// Ctrl-C as a raw terminal delivers it; other keys do not stop it.
func TestTopQuitsOnQ(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	n := startTopNode(t)
	isolateNATSEnv(t)
	t.Setenv("NATS_URL", n.URL())
	for _, key := range []string{"q", "\x03"} {
		keys, press := io.Pipe()
		t.Cleanup(func() { _ = press.Close() }) // a write top never reads ends with the test
		var out testkit.Buffer
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		done := make(chan error, 1)
		go func() {
			done <- runTop(ctx, &out, topOptions{
				live:     liveFlags{connFlags: connFlags{prefix: bus.DefaultPrefix, timeout: 5 * time.Second}},
				interval: 10 * time.Millisecond, keys: keys,
			})
		}()
		testkit.Eventually(t, "a frame", func() bool { return len(out.String()) > 0 })
		if _, err := press.Write([]byte("x ")); err != nil {
			t.Fatal(err)
		}
		// A pipe's write returns once it is read: top reads "y" only if
		// it did not stop at "x ".
		read := make(chan error, 1)
		go func() { _, err := press.Write([]byte("y")); read <- err }()
		select {
		case err := <-done:
			t.Fatalf("top stopped at a key that is not q: %v", err)
		case err := <-read:
			if err != nil {
				t.Fatal(err)
			}
		}
		if _, err := press.Write([]byte(key)); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil || ctx.Err() != nil {
			t.Errorf("top after %q: %v (context %v)", key, err, ctx.Err())
		}
		cancel()
		_ = press.Close()
	}
}
