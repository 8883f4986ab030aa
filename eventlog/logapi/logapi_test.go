package logapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/natsbus"
	"github.com/jido-bus/jido-bus/bus/natsserver/natstest"
	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/nats-io/nats.go"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// setup starts an embedded NATS server, a Log with two streams, and a
// Server, and returns a Client for them.
func setup(t *testing.T, subjects bus.Subjects) (Client, *eventlog.Log) {
	t.Helper()
	l, err := eventlog.Open("db", eventlog.Options{FS: vfs.NewMem()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	for i := 1; i <= 5; i++ {
		if _, err := l.Append(context.Background(), "agent/a", eventlog.AnyVersion, signal(t, "user.created", fmt.Sprintf("a%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := l.Append(context.Background(), "agent/b", eventlog.AnyVersion, signal(t, "user.deleted", "b1")); err != nil {
		t.Fatal(err)
	}
	srv := natstest.RunServer(t)
	serve(t, natstest.Connect(t, srv), Local{Log: l}, subjects, nil)
	return Client{NC: natstest.Connect(t, srv), Subjects: subjects}, l
}

// serve serves local's log API on a Bus of its own on nc, closed when the
// test ends; opts may set the Bus's other options.
func serve(t *testing.T, nc *nats.Conn, local API, subjects bus.Subjects, opts *natsbus.Options) *natsbus.Bus {
	t.Helper()
	o := natsbus.Options{}
	if opts != nil {
		o = *opts
	}
	o.Subjects = subjects
	b := natsbus.New(nc, o)
	t.Cleanup(func() { _ = b.Shutdown(context.Background()) })
	if err := Serve(b, local); err != nil {
		t.Fatal(err)
	}
	return b
}

func signal(t *testing.T, typ, id string) bus.Signal {
	s, err := bus.NewSignal(typ, "test", map[string]string{"id": id})
	if err != nil {
		t.Fatal(err)
	}
	s.SetID(id)
	return s
}

func TestClientAgainstServer(t *testing.T) {
	ctx := context.Background()
	c, _ := setup(t, bus.Subjects{Prefix: "acme.jido"})

	streams, err := c.Streams(ctx, StreamsRequest{})
	if err != nil || len(streams.Streams) != 2 || streams.Streams[0].Head != 5 {
		t.Fatalf("streams = %+v, %v", streams, err)
	}

	page, err := c.Read(ctx, ReadRequest{Stream: "agent/a", From: 2, Limit: 2})
	if err != nil || len(page.Entries) != 2 || page.Entries[0].Seq != 2 || page.Next != 4 || !page.More {
		t.Fatalf("page = %+v, %v", page, err)
	}
	var ev bus.Signal
	if err := json.Unmarshal(page.Entries[1].Event, &ev); err != nil || ev.ID() != "a3" {
		t.Fatalf("event = %s, %v", page.Entries[1].Event, err)
	}
	last, err := c.Read(ctx, ReadRequest{Stream: "agent/a", From: 4})
	if err != nil || len(last.Entries) != 2 || last.More {
		t.Fatalf("last page = %+v, %v", last, err)
	}
	global, err := c.Read(ctx, ReadRequest{Types: "user.deleted"})
	if err != nil || len(global.Entries) != 1 || global.Entries[0].GlobalSeq != 6 {
		t.Fatalf("global filtered = %+v, %v", global, err)
	}

	events := []json.RawMessage{page.Entries[0].Event, mustJSON(t, signal(t, "user.created", "new"))}
	imp, err := c.Import(ctx, ImportRequest{Stream: "agent/a", Events: events})
	if err != nil || imp.Appended != 1 || imp.Duplicates != 1 || imp.Version != 6 {
		t.Fatalf("import = %+v, %v", imp, err)
	}

	tr, err := c.Truncate(ctx, TruncateRequest{Stream: "agent/a", Before: 3})
	if err != nil || tr.Removed != 2 {
		t.Fatalf("truncate = %+v, %v", tr, err)
	}
	report, err := c.Verify(ctx, VerifyRequest{})
	if err != nil || !report.OK() || report.StreamEntries != 5 {
		t.Fatalf("verify = %+v, %v", report, err)
	}
}

func TestErrorReplies(t *testing.T) {
	ctx := context.Background()
	c, _ := setup(t, bus.Subjects{})
	cases := []struct {
		name string
		call func() error
		typ  string
	}{
		{"unknown stream", func() error { _, err := c.Read(ctx, ReadRequest{Stream: "agent/zz"}); return err }, bus.ReasonNotFound},
		{"invalid stream", func() error { _, err := c.Read(ctx, ReadRequest{Stream: "a//b"}); return err }, eventlog.ReasonInvalidStream},
		{"bad pattern", func() error { _, err := c.Read(ctx, ReadRequest{Types: "a.**.**"}); return err }, bus.ReasonInvalidPattern},
		{"not a cloudevent", func() error {
			_, err := c.Import(ctx, ImportRequest{Stream: "agent/a", Events: []json.RawMessage{json.RawMessage(`{"x":1}`)}})
			return err
		}, bus.ReasonMalformed},
		{"truncate before 0", func() error { _, err := c.Truncate(ctx, TruncateRequest{Stream: "agent/a"}); return err }, bus.ReasonInvalidRequest},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			if got := bus.ErrorType(err); got != tc.typ {
				t.Fatalf("error type %q, want %q (%v)", got, tc.typ, err)
			}
		})
	}
	// Truncated positions read as gone.
	if _, err := c.Truncate(ctx, TruncateRequest{Stream: "agent/a", Before: 3}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Read(ctx, ReadRequest{Stream: "agent/a", From: 1}); bus.ErrorType(err) != eventlog.ReasonGone {
		t.Fatalf("read truncated: %v", err)
	}
}

func TestNoServer(t *testing.T) {
	srv := natstest.RunServer(t)
	c := Client{NC: natstest.Connect(t, srv)}
	if _, err := c.Streams(context.Background(), StreamsRequest{}); !errors.Is(err, ErrNoServer) {
		t.Fatalf("err = %v, want ErrNoServer", err)
	}
}

func mustJSON(t *testing.T, s bus.Signal) json.RawMessage {
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
