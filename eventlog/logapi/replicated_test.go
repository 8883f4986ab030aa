package logapi

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/natsserver/natstest"
	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/jido-bus/jido-bus/eventlog/jslog"
)

// setupReplicated serves a replicated log (one JetStream server, one
// replica: the verbs, not JetStream's replication, are under test) with
// agent/a at version 5 and agent/b at 1, and returns a Client for it.
func setupReplicated(t *testing.T, guard func(context.Context, ImportRequest) error) (Client, *jslog.Log, *nats.Conn) {
	t.Helper()
	srv := natstest.RunServer(t)
	nc := natstest.Connect(t, srv)
	l, err := jslog.Open(t.Context(), nc, jslog.Options{Prefix: "acme", Partitions: 3, Replicas: 1, AllowFewerReplicas: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 5; i++ {
		if _, err := l.Append(t.Context(), "agent/a", eventlog.AnyVersion, signal(t, "user.created", fmt.Sprintf("a%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := l.Append(t.Context(), "agent/b", eventlog.AnyVersion, signal(t, "user.deleted", "b1")); err != nil {
		t.Fatal(err)
	}
	subjects := bus.Subjects{Prefix: "acme"}
	serve(t, natstest.Connect(t, srv), Replicated{Log: l, ImportGuard: guard}, subjects, nil)
	return Client{NC: natstest.Connect(t, srv), Subjects: subjects}, l, nc
}

// TestReplicatedServesTheVerbs: through NATS, a cluster node's log API
// lists, reads, imports into and verifies the replicated log as a single
// node's does its own.
func TestReplicatedServesTheVerbs(t *testing.T) {
	ctx := context.Background()
	c, _, _ := setupReplicated(t, nil)

	streams, err := c.Streams(ctx, StreamsRequest{})
	want := []eventlog.StreamInfo{{Stream: "agent/a", Head: 5, First: 1, Count: 5}, {Stream: "agent/b", Head: 1, First: 1, Count: 1}}
	if err != nil || fmt.Sprint(streams.Streams) != fmt.Sprint(want) || streams.Next != "" {
		t.Fatalf("streams = %+v, %v; want %+v", streams, err, want)
	}
	if none, err := c.Streams(ctx, StreamsRequest{Prefix: "\x00"}); err != nil || len(none.Streams) != 0 || none.Streams == nil {
		t.Fatalf("streams under a prefix no stream has = %+v, %v; want an empty list", none, err)
	}

	page, err := c.Read(ctx, ReadRequest{Stream: "agent/a", From: 2, Limit: 2})
	if err != nil || len(page.Entries) != 2 || page.Entries[0].Seq != 2 || page.Next != 4 || !page.More {
		t.Fatalf("page = %+v, %v", page, err)
	}
	var ev bus.Signal
	if err := json.Unmarshal(page.Entries[1].Event, &ev); err != nil || ev.ID() != "a3" {
		t.Fatalf("event = %s, %v", page.Entries[1].Event, err)
	}
	last, err := c.Read(ctx, ReadRequest{Stream: "agent/a", Backward: true, Limit: 1})
	if err != nil || len(last.Entries) != 1 || last.Entries[0].Seq != 5 {
		t.Fatalf("last entry = %+v, %v", last, err)
	}

	events := []json.RawMessage{page.Entries[0].Event, mustJSON(t, signal(t, "user.created", "new"))}
	imp, err := c.Import(ctx, ImportRequest{Stream: "agent/a", Events: events})
	if err != nil || imp.Appended != 1 || imp.Duplicates != 1 || imp.Version != 6 {
		t.Fatalf("import = %+v, %v", imp, err)
	}
	report, err := c.Verify(ctx, VerifyRequest{})
	if err != nil || !report.OK() || report.StreamEntries != 7 || report.GlobalEntries != 7 {
		t.Fatalf("verify = %+v, %v; want 7 entries in 7 messages, nothing damaged", report, err)
	}
}

// TestReplicatedRefusesWhatItCannotServe: what the replicated log cannot
// do is refused with cluster_unsupported and a way forward, never
// answered from somewhere else; bad requests get the single node's
// answers.
func TestReplicatedRefusesWhatItCannotServe(t *testing.T) {
	ctx := context.Background()
	forbidden := func(_ context.Context, req ImportRequest) error {
		if strings.HasPrefix(req.Stream, "runtime/") {
			return bus.Errorf(bus.ReasonForbidden, "no")
		}
		return nil
	}
	c, _, _ := setupReplicated(t, forbidden)
	event := []json.RawMessage{mustJSON(t, signal(t, "user.created", "x"))}
	cases := []struct {
		name string
		call func() error
		typ  string
		says string
	}{
		{"global read", func() error { _, err := c.Read(ctx, ReadRequest{}); return err }, ReasonClusterUnsupported, "name a stream"},
		{"global read backward", func() error { _, err := c.Read(ctx, ReadRequest{Backward: true, Limit: 1}); return err }, ReasonClusterUnsupported, "ACME_LOG_<n>"},
		{"dead letters", func() error { _, err := c.Read(ctx, ReadRequest{Stream: "dlq"}); return err }, ReasonClusterUnsupported, "nats sub 'acme.dlq.>'"},
		{"import dead letters", func() error { _, err := c.Import(ctx, ImportRequest{Stream: "dlq", Events: event}); return err }, ReasonClusterUnsupported, "own data dir"},
		{"truncate dead letters", func() error {
			_, err := c.Truncate(ctx, TruncateRequest{Stream: "dlq", Before: 3})
			return err
		}, ReasonClusterUnsupported, "own data dir"},
		{"truncate unknown stream", func() error {
			_, err := c.Truncate(ctx, TruncateRequest{Stream: "agent/zz", Before: 3})
			return err
		}, bus.ReasonNotFound, "agent/zz"},
		{"truncate before 0", func() error {
			_, err := c.Truncate(ctx, TruncateRequest{Stream: "agent/a"})
			return err
		}, bus.ReasonInvalidRequest, "1 or more"},
		{"unknown stream", func() error { _, err := c.Read(ctx, ReadRequest{Stream: "agent/zz"}); return err }, bus.ReasonNotFound, "agent/zz"},
		{"invalid stream", func() error { _, err := c.Read(ctx, ReadRequest{Stream: "a//b"}); return err }, eventlog.ReasonInvalidStream, "empty segment"},
		{"bad pattern", func() error { _, err := c.Read(ctx, ReadRequest{Stream: "agent/a", Types: "a.**.**"}); return err }, bus.ReasonInvalidPattern, ""},
		{"negative limit", func() error { _, err := c.Read(ctx, ReadRequest{Stream: "agent/a", Limit: -1}); return err }, bus.ReasonInvalidRequest, ""},
		{"not a cloudevent", func() error {
			_, err := c.Import(ctx, ImportRequest{Stream: "agent/a", Events: []json.RawMessage{json.RawMessage(`{"x":1}`)}})
			return err
		}, bus.ReasonMalformed, ""},
		{"import guard", func() error {
			_, err := c.Import(ctx, ImportRequest{Stream: "runtime/agents/1", Events: event})
			return err
		}, bus.ReasonForbidden, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			if got := bus.ErrorType(err); got != tc.typ || !strings.Contains(fmt.Sprint(err), tc.says) {
				t.Fatalf("error %v (type %q); want type %q saying %q", err, got, tc.typ, tc.says)
			}
		})
	}
}

// TestReplicatedPageReportsDamage: a stream with a damaged message is
// answered with the damage listed (the reply is not an error, so the
// command can say where), not a failed request.
func TestReplicatedPageReportsDamage(t *testing.T) {
	c, l, nc := setupReplicated(t, nil)
	m := nats.NewMsg(l.Subject("agent/b"))
	m.Header.Set("Jido-Version", "2")
	m.Header.Set("Jido-Events", "1")
	m.Header.Set("Jido-Stream", "agent/b")
	m.Data = []byte("not json")
	js, err := nc.JetStream()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.PublishMsg(m); err != nil {
		t.Fatal(err)
	}
	page, err := c.Read(context.Background(), ReadRequest{Stream: "agent/b"})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Damaged) != 1 || page.Damaged[0].Seq != 2 || page.More {
		t.Fatalf("page = %+v; want seq 2 listed as damaged", page)
	}
}

// TestReplicatedTruncates: through NATS, a truncation of the replicated
// log asks the guard first (dry runs too), says what would go without
// changing anything on a dry run, and removes it otherwise; a guard's
// refusal is the reply and nothing goes.
func TestReplicatedTruncates(t *testing.T) {
	ctx := context.Background()
	srv := natstest.RunServer(t)
	nc := natstest.Connect(t, srv)
	l, err := jslog.Open(t.Context(), nc, jslog.Options{Prefix: "acme", Partitions: 3, Replicas: 1, AllowFewerReplicas: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 5; i++ {
		if _, err := l.Append(t.Context(), "agent/a", eventlog.AnyVersion, signal(t, "user.created", fmt.Sprintf("a%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	var asked []TruncateRequest
	guard := func(_ context.Context, req TruncateRequest) error {
		asked = append(asked, req)
		if req.Before > 4 {
			return bus.Errorf("truncate_refused", "recovery needs seq 4 on")
		}
		return nil
	}
	subjects := bus.Subjects{Prefix: "acme"}
	serve(t, natstest.Connect(t, srv), Replicated{Log: l, Guard: guard}, subjects, nil)
	c := Client{NC: natstest.Connect(t, srv), Subjects: subjects}

	if _, err := c.Truncate(ctx, TruncateRequest{Stream: "agent/a", Before: 5}); bus.ErrorType(err) != "truncate_refused" {
		t.Fatalf("a cut the guard refuses: %v, want its refusal", err)
	}
	dry, err := c.Truncate(ctx, TruncateRequest{Stream: "agent/a", Before: 4, DryRun: true})
	if err != nil || dry.Removed != 3 || dry.From != 1 || dry.To != 3 || dry.Bytes == 0 || !dry.DryRun {
		t.Fatalf("dry run = %+v, %v; want 1-3", dry, err)
	}
	if info, _ := l.Stream("agent/a"); info.First != 1 {
		t.Fatalf("after the dry run the stream begins at %d", info.First)
	}
	r, err := c.Truncate(ctx, TruncateRequest{Stream: "agent/a", Before: 4})
	if err != nil || r.Removed != 3 || r.From != 1 || r.To != 3 || r.DryRun {
		t.Fatalf("truncate = %+v, %v; want 1-3", r, err)
	}
	if len(asked) != 3 || !asked[1].DryRun || asked[2].DryRun {
		t.Fatalf("the guard was asked %+v; want every request, dry run included", asked)
	}
	page, err := c.Read(ctx, ReadRequest{Stream: "agent/a"})
	if err != nil || len(page.Entries) != 2 || page.Entries[0].Seq != 4 {
		t.Fatalf("read after truncation = %+v, %v; want 4 and 5", page, err)
	}
	if _, err := c.Read(ctx, ReadRequest{Stream: "agent/a", From: 2}); bus.ErrorType(err) != eventlog.ReasonGone {
		t.Fatalf("read from a truncated position: %v, want %s", err, eventlog.ReasonGone)
	}
}
