package logapi

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/natsbus"
	"github.com/jido-bus/jido-bus/bus/natsserver/natstest"
	"github.com/jido-bus/jido-bus/eventlog"
)

// TestEmptyListsAreEmptyArrays: on an empty log every list in a reply is
// [] (or absent where documented as optional), never null, which a
// client in another language would have to special-case.
func TestEmptyListsAreEmptyArrays(t *testing.T) {
	l, err := eventlog.Open("db", eventlog.Options{FS: vfs.NewMem()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	srv := natstest.RunServer(t)
	serve(t, natstest.Connect(t, srv), Local{Log: l}, bus.Subjects{}, nil)
	nc := natstest.Connect(t, srv)
	for _, tc := range []struct{ subject, body, want string }{
		{"jido.api.log.verify", ``, `"damaged":[]`},
		{"jido.api.log.streams", ``, `"streams":[]`},
		{"jido.api.log.streams", `{"prefix":"nothing/"}`, `"streams":[]`},
		{"jido.api.log.show", ``, `"entries":[]`},
	} {
		m, err := nc.Request(tc.subject, []byte(tc.body), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(m.Data), "null") || !strings.Contains(string(m.Data), tc.want) {
			t.Errorf("%s %s: reply %s, want %s and no null", tc.subject, tc.body, m.Data, tc.want)
		}
	}
}

// TestInvalidStreamIsRefused: a stream name that breaks the grammar is bad
// input, like an agent id that does: answered invalid_stream, and
// dead-lettered and counted as a refusal.
func TestInvalidStreamIsRefused(t *testing.T) {
	l, err := eventlog.Open("db", eventlog.Options{FS: vfs.NewMem()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	srv := natstest.RunServer(t)
	var dead atomic.Int64
	b := serve(t, natstest.Connect(t, srv), Local{Log: l}, bus.Subjects{}, &natsbus.Options{OnDeadLetter: func(natsbus.DeadLetter) { dead.Add(1) }})
	nc := natstest.Connect(t, srv)
	reqs := []struct{ subject, body string }{
		{"jido.api.log.show", `{"stream":"a//b"}`},
		{"jido.api.log.import", `{"stream":"bad stream","events":[{"specversion":"1.0","id":"1","source":"x","type":"a.b"}]}`},
		{"jido.api.log.truncate", `{"stream":"../x","before":2}`},
	}
	for _, tc := range reqs {
		m, err := nc.Request(tc.subject, []byte(tc.body), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(string(m.Data), `{"ok":false,"error":{"type":"invalid_stream"`) {
			t.Errorf("%s %s: reply %s, want invalid_stream", tc.subject, tc.body, m.Data)
		}
	}
	if st := b.Stats(); st.DeadLetters != uint64(len(reqs)) || dead.Load() != int64(len(reqs)) {
		t.Fatalf("stats %+v, dead letters filed %d: want %d dead letters", st, dead.Load(), len(reqs))
	}
}
