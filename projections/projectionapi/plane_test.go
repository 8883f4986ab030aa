package projectionapi

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/bus/natsbus"
	"github.com/jido-bus/jido-bus/bus/natsserver/natstest"
	"github.com/jido-bus/jido-bus/conversation/views"
	"github.com/jido-bus/jido-bus/projections"
)

// serve serves local on a Bus of its own on nc (default subjects), shut
// down when the test ends.
func serve(t *testing.T, nc *nats.Conn, local Local) *natsbus.Bus {
	t.Helper()
	b := natsbus.New(nc, natsbus.Options{})
	t.Cleanup(func() { _ = b.Shutdown(context.Background()) })
	if err := Serve(b, local); err != nil {
		t.Fatal(err)
	}
	return b
}

// TestUnknownFieldsAreRefused: every verb refuses a request
// with a field it does not know (a misspelt "view" would otherwise show
// the default view as if it were the one asked for), as invalid_request
// in the one reply shape, and files it as a dead letter.
func TestUnknownFieldsAreRefused(t *testing.T) {
	l, store := openLogAndStore(t, t.TempDir())
	r, err := projections.NewRunner(l, store, projections.Options{}, views.Projections(views.Options{})...)
	if err != nil {
		t.Fatal(err)
	}
	srv := natstest.RunServer(t)
	b := serve(t, natstest.Connect(t, srv), Local{Runner: r})
	nc := natstest.Connect(t, srv)
	dlq, err := nc.SubscribeSync("jido.dlq.invalid_request")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct{ subject, body string }{
		{"jido.api.projection.ls", `{"all":true}`},
		{"jido.api.projection.get", `{"name":"conv_status","key":"p/c","att":3}`},
		{"jido.api.projection.rebuild", `{"name":"conv_status","force":true}`},
	}
	for _, tc := range cases {
		m, err := nc.Request(tc.subject, []byte(tc.body), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(string(m.Data), `{"ok":false,"error":{"type":"invalid_request","message":"request: json: unknown field`) {
			t.Fatalf("%s %s: reply %s, want invalid_request naming the unknown field", tc.subject, tc.body, m.Data)
		}
		if _, err := dlq.NextMsg(5 * time.Second); err != nil {
			t.Fatalf("%s: no dead letter: %v", tc.subject, err)
		}
	}
	if st := b.Stats(); st.APIRequests != uint64(len(cases)) {
		t.Fatalf("stats %+v, want %d requests", st, len(cases))
	}
}
