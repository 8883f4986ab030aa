package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestGet: a 2xx is healthy; a 503 (nats-server's /healthz while
// JetStream recovers, jido-bus's /readyz naming the failing check) is
// not, and the error carries the body that says why; nothing listening
// is not healthy either.
func TestGet(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/down" {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(`{"status":"unavailable","error":"JetStream has not established contact with a meta leader"}`))
			return
		}
		_, _ = w.Write([]byte(`{"status":"ok"}`))
	}))
	ctx := context.Background()
	if body, err := get(ctx, srv.URL+"/healthz?js-enabled-only=true"); err != nil || string(body) != `{"status":"ok"}` {
		t.Fatalf("healthy: %q, %v", body, err)
	}
	if _, err := get(ctx, srv.URL+"/down"); err == nil || !strings.Contains(err.Error(), "503") || !strings.Contains(err.Error(), "meta leader") {
		t.Fatalf("unhealthy: %v, want the status and the body", err)
	}
	srv.Close()
	if _, err := get(ctx, srv.URL+"/healthz"); err == nil {
		t.Fatal("closed server: no error")
	}
}
