package logapi

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/natsbus"
	"github.com/jido-bus/jido-bus/bus/natsserver/natstest"
	"github.com/jido-bus/jido-bus/eventlog"
)

// TestLogAPIIsOnTheControlPlane: the log verbs are served like every other
// area: a request with a field the verb does not know is refused
// invalid_request (it might have meant something: "dry_run" misspelt)
// and dead-lettered, in the one reply shape; requests count.
func TestLogAPIIsOnTheControlPlane(t *testing.T) {
	l, err := eventlog.Open("db", eventlog.Options{FS: vfs.NewMem()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	if _, err := l.Append(context.Background(), "agent/a", eventlog.AnyVersion, signal(t, "user.created", "a1"), signal(t, "user.created", "a2")); err != nil {
		t.Fatal(err)
	}
	srv := natstest.RunServer(t)
	var dead atomic.Int64
	b := serve(t, natstest.Connect(t, srv), Local{Log: l}, bus.Subjects{}, &natsbus.Options{OnDeadLetter: func(natsbus.DeadLetter) { dead.Add(1) }})
	nc := natstest.Connect(t, srv)
	for _, tc := range []struct{ subject, body string }{
		{"jido.api.log.truncate", `{"stream":"agent/a","before":2,"dryrun":true}`},
		{"jido.api.log.show", `{"stream":"agent/a","lmit":1}`},
		{"jido.api.log.streams", `{"prefix":"agent/","all":true}`},
		{"jido.api.log.verify", `{"deep":true}`},
		{"jido.api.log.import", `{"stream":"agent/a","events":[],"force":true}`},
	} {
		m, err := nc.Request(tc.subject, []byte(tc.body), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(string(m.Data), `{"ok":false,"error":{"type":"invalid_request","message":"request: json: unknown field`) {
			t.Fatalf("%s %s: reply %s, want invalid_request naming the unknown field", tc.subject, tc.body, m.Data)
		}
	}
	if info, err := l.Stream("agent/a"); err != nil || info.Count != 2 {
		t.Fatalf("agent/a %+v %v: the refused truncation must change nothing", info, err)
	}
	if st := b.Stats(); st.APIRequests != 5 || st.DeadLetters != 5 || dead.Load() != 5 {
		t.Fatalf("stats %+v, dead letters filed %d: want 5 requests, 5 dead letters", st, dead.Load())
	}
}

// TestTwoNodesOnOnePrefixAnswerOnce: two servers on one prefix share the
// queue group, so a request gets one reply, not two (a second reply would
// be a second truncation or import).
func TestTwoNodesOnOnePrefixAnswerOnce(t *testing.T) {
	srv := natstest.RunServer(t)
	var buses [2]*natsbus.Bus
	for i := range buses {
		l, err := eventlog.Open("db", eventlog.Options{FS: vfs.NewMem()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		buses[i] = serve(t, natstest.Connect(t, srv), Local{Log: l}, bus.Subjects{}, nil)
	}
	nc := natstest.Connect(t, srv)
	inbox := nats.NewInbox()
	replies, err := nc.SubscribeSync(inbox)
	if err != nil {
		t.Fatal(err)
	}
	const requests = 20
	for range requests {
		if err := nc.PublishRequest("jido.api.log.truncate", inbox, []byte(`{"stream":"agent/a","before":1,"dry_run":true}`)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range requests {
		if _, err := replies.NextMsg(5 * time.Second); err != nil {
			t.Fatalf("reply %d: %v", i, err)
		}
	}
	// Every request has been answered; a stray second answer would be
	// in flight behind them. Flush through the server and look.
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	if m, err := replies.NextMsg(100 * time.Millisecond); err == nil {
		t.Fatalf("a request was answered twice: %s", m.Data)
	}
	a, b := buses[0].Stats().APIRequests, buses[1].Stats().APIRequests
	if a+b != requests {
		t.Fatalf("served %d and %d times, want %d in all", a, b, requests)
	}
}
