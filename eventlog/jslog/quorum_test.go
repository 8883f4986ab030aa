package jslog

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// varzServer answers /varz as a server with JetStream fsyncing always.
func varzServer(t *testing.T, name string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"server_name":"`+name+`","jetstream":{"config":{"sync_always":true},"meta":{"cluster_size":3}}}`)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// silentServer accepts connections and never answers: a server whose
// name or address hangs.
func silentServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { _ = c.Close() })
		}
	}()
	return "http://" + ln.Addr().String()
}

func TestServerSettingsNeedAMajority(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	ctx := context.Background()
	a, b, down := varzServer(t, "a"), varzServer(t, "b"), silentServer(t)
	// One server hanging: the others are read and the node may start.
	got, err := fetchQuorum(ctx, []string{down, a, b}, log)
	if err != nil || len(got) != 2 {
		t.Fatalf("one of three down: %d servers, %v; want the two others", len(got), err)
	}
	// Two of three down: no majority to vouch for the cluster.
	_, err = fetchQuorum(ctx, []string{down, silentServer(t), a}, log)
	if err == nil || !strings.Contains(err.Error(), "1 of 3 servers answered") {
		t.Fatalf("two of three down: %v, want a refusal naming 1 of 3", err)
	}
}
