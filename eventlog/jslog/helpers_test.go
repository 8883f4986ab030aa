package jslog

import (
	"context"
	"iter"
	"testing"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/agents/runtime"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/eventlog"
)

// The Log is a runtime.Store (asserted here: eventlog/jslog must not
// import the runtime, which sits above it).
var _ runtime.Store = (*Log)(nil)

func sig(typ, id string) bus.Signal {
	s, err := bus.NewSignal(typ, "test", map[string]string{"id": id})
	if err != nil {
		panic(err)
	}
	s.SetID(id)
	return s
}

func sigs(typ string, ids ...string) []bus.Signal {
	out := make([]bus.Signal, len(ids))
	for i, id := range ids {
		out[i] = sig(typ, id)
	}
	return out
}

func collect(t testing.TB, it iter.Seq2[eventlog.Entry, error]) []eventlog.Entry {
	t.Helper()
	var out []eventlog.Entry
	for e, err := range it {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	return out
}

func mustAppend(t testing.TB, l *Log, stream string, expected eventlog.ExpectedVersion, events ...bus.Signal) eventlog.AppendResult {
	t.Helper()
	res, err := l.Append(context.Background(), stream, expected, events...)
	if err != nil {
		t.Fatalf("append to %s: %v", stream, err)
	}
	return res
}

// ids lists the ids of entries in order.
func ids(entries []eventlog.Entry) []string {
	var out []string
	for _, e := range entries {
		out = append(out, e.Event.ID())
	}
	return out
}

func connectTo(t *testing.T, s *server.Server, user, pass string) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(s.ClientURL(), nats.UserInfo(user, pass))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}
