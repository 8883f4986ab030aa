package dispatch

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// TestWebhookReadsABoundedResponse: a receiver answering an endless body
// (an error page that never ends, or one meant to tie the node up) is
// read only up to a bound: the delivery ends, and the error it records
// keeps only the head of the body.
func TestWebhookReadsABoundedResponse(t *testing.T) {
	const limit = 256 << 20 // far past any bound; an unbounded read stops here
	var written atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusBadRequest) // not retried: one attempt
		chunk := bytes.Repeat([]byte("x"), 64<<10)
		for written.Load() < limit {
			n, err := w.Write(chunk)
			written.Add(int64(n))
			if err != nil {
				return // the client closed the body
			}
		}
	}))
	t.Cleanup(srv.Close)
	d, err := New(hookConfig(srv.URL), hookEnv(t, newFakeClock(), srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	s := testSignal(t, "counter.changed")
	err = d.Dispatch(context.Background(), "c1", &s)
	if err == nil {
		t.Fatal("Dispatch to a receiver answering 400 succeeded")
	}
	if n := len(err.Error()); n > 2*maxErrorBody+1024 {
		t.Errorf("the error is %d bytes: it keeps more than the head of the body", n)
	}
	// What the client read is the error's head and the drain bound; the
	// rest is what the connection's buffers took before it closed.
	if w := written.Load(); w >= limit {
		t.Errorf("the receiver wrote %d bytes and the client read them all", w)
	}
}
