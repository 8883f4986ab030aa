package projectionapi

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/natsserver/natstest"
	"github.com/jido-bus/jido-bus/conversation"
	"github.com/jido-bus/jido-bus/conversation/views"
	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/jido-bus/jido-bus/projections"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// openLogAndStore opens an event log and a projection store in dir, both
// closed when the test ends.
func openLogAndStore(t *testing.T, dir string) (*eventlog.Log, *projections.Store) {
	t.Helper()
	l, err := eventlog.Open(filepath.Join(dir, "log"), eventlog.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	store, err := projections.OpenStore(filepath.Join(dir, "projections"), projections.StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	return l, store
}

func event(t *testing.T, typ, id, data string) bus.Signal {
	t.Helper()
	s := bus.Signal{}
	s.SetSpecVersion(bus.SpecVersion)
	s.SetType(typ)
	s.SetID(id)
	s.SetSource("/test")
	s.SetTime(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	s.SetExtension(bus.ExtCausationID, "c")
	if err := bus.SetJSONData(&s, json.RawMessage(data)); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestClientAgainstServer runs every verb over NATS and checks it answers
// what Local answers, errors included.
func TestClientAgainstServer(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	l, store := openLogAndStore(t, dir)
	_, err := l.Append(ctx, conversation.Stream("p1/c1"), eventlog.NoStream,
		event(t, conversation.Started, "e1", `{"project_id":"p1","conversation_id":"c1"}`),
		event(t, conversation.UserMessage, "e2", `{"text":"hi"}`),
		event(t, conversation.ToolRequested, "e3", `{"call_id":"t1","name":"ls"}`),
		event(t, conversation.ToolCompleted, "e4", `{"call_id":"t1","output":"a b"}`),
	)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append(ctx, conversation.Stream("p2/c9"), eventlog.NoStream, event(t, conversation.Started, "x1", `{"project_id":"p2","conversation_id":"c9"}`)); err != nil {
		t.Fatal(err)
	}
	r, err := projections.NewRunner(l, store, projections.Options{}, views.Projections(views.Options{})...)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.CatchUp(ctx, nil); err != nil {
		t.Fatal(err)
	}
	local := Local{Runner: r, Log: l, Now: func() time.Time { return time.Date(2025, 2, 1, 0, 0, 0, 0, time.UTC) }}
	if _, err := local.ConvFork(ctx, ConvForkRequest{Conv: "p1/c1", Seq: 3}); !errors.Is(err, &bus.Error{Type: bus.ReasonUnavailable}) {
		t.Errorf("fork with no Append (no node to start the fork's agent): %v", err)
	}
	// A stand-in for the node's, which starts the agent: one that takes a
	// conversation's id refuses a second fork onto it.
	local.Append = func(ctx context.Context, conv string, events []bus.Signal) (eventlog.AppendResult, error) {
		return l.Append(ctx, conversation.Stream(conv), eventlog.NoStream, events...)
	}
	srv := natstest.RunServer(t)
	nc := natstest.Connect(t, srv)
	server := serve(t, nc, local)
	c := Client{NC: nc}

	ls, err := c.List(ctx, ListRequest{})
	if err != nil || len(ls.Projections) != 4 || ls.Projections[0].Name != "timeline" || ls.Projections[0].Lag != 0 || ls.Projections[0].Keys != 2 {
		t.Fatalf("ls = %+v, %v", ls, err)
	}
	got, err := c.Get(ctx, GetRequest{Name: "status", Key: "p1/c1"})
	if err != nil || !strings.Contains(string(got.State), `"state":"idle"`) || got.Position != 5 {
		t.Fatalf("get = %s at %d, %v", got.State, got.Position, err)
	}
	got, err = c.Get(ctx, GetRequest{Name: "status", Key: "p1/c1", At: projections.Until{Seq: 3}})
	if err != nil || !strings.Contains(string(got.State), `"state":"awaiting_tools"`) {
		t.Fatalf("get at seq 3 = %s, %v", got.State, err)
	}
	if _, err := c.Get(ctx, GetRequest{Name: "status", Key: "p1/none"}); !errors.Is(err, &bus.Error{Type: bus.ReasonNotFound}) {
		t.Errorf("get of a missing key: %v", err)
	}
	if _, err := c.Get(ctx, GetRequest{}); !errors.Is(err, &bus.Error{Type: bus.ReasonInvalidRequest}) {
		t.Errorf("get without a name: %v", err)
	}

	convs, err := c.ConvList(ctx, ConvListRequest{})
	if err != nil || len(convs.Conversations) != 2 || convs.Conversations[0].Conv != "p1/c1" || convs.Conversations[1].State != "idle" {
		t.Fatalf("conv ls = %+v, %v", convs, err)
	}
	convs, err = c.ConvList(ctx, ConvListRequest{Project: "p2"})
	if err != nil || len(convs.Conversations) != 1 || convs.Conversations[0].Conv != "p2/c9" {
		t.Fatalf("conv ls p2 = %+v, %v", convs, err)
	}
	convs, err = c.ConvList(ctx, ConvListRequest{Limit: 1})
	if err != nil || len(convs.Conversations) != 1 || convs.Next != "p1/c1" {
		t.Fatalf("conv ls page = %+v, %v", convs, err)
	}
	show, err := c.ConvShow(ctx, ConvShowRequest{Conv: "p1/c1"})
	if err != nil || show.View != "timeline" || !strings.Contains(string(show.State), `"call_id":"t1"`) {
		t.Fatalf("conv show = %+v, %v", show, err)
	}
	show, err = c.ConvShow(ctx, ConvShowRequest{Conv: "p1/c1", View: "llm_context", Seq: 2})
	if err != nil || strings.Contains(string(show.State), "tool") {
		t.Fatalf("conv show at 2 = %s, %v", show.State, err)
	}
	for _, bad := range []ConvShowRequest{{Conv: "nope"}, {Conv: "p1/c1", View: "x"}} {
		if _, err := c.ConvShow(ctx, bad); !errors.Is(err, &bus.Error{Type: bus.ReasonInvalidRequest}) {
			t.Errorf("conv show %+v: %v", bad, err)
		}
	}

	fork, err := c.ConvFork(ctx, ConvForkRequest{Conv: "p1/c1", Seq: 3})
	if err != nil || fork.Conv != "p1/c1-fork-3" || fork.Events != 4 {
		t.Fatalf("fork = %+v, %v", fork, err)
	}
	if _, err := c.ConvFork(ctx, ConvForkRequest{Conv: "p1/c1", Seq: 2, As: "p1/c1-fork-3"}); !errors.Is(err, &bus.Error{Type: "conflict"}) {
		t.Errorf("fork onto an existing conversation: %v", err)
	}
	if _, err := c.ConvFork(ctx, ConvForkRequest{Conv: "p1/gone", Seq: 2}); !errors.Is(err, &bus.Error{Type: bus.ReasonNotFound}) {
		t.Errorf("fork of a missing conversation: %v", err)
	}
	if err := r.CatchUp(ctx, nil); err != nil {
		t.Fatal(err)
	}
	st, err := c.ConvShow(ctx, ConvShowRequest{Conv: "p1/c1-fork-3", View: "status"})
	if err != nil || !strings.Contains(string(st.State), `"parent":{"conversation":"p1/c1","seq":3`) || !strings.Contains(string(st.State), `"state":"idle"`) {
		t.Fatalf("fork status = %s, %v", st.State, err)
	}

	rb, err := c.Rebuild(ctx, RebuildRequest{Name: "diagnostics"})
	if err != nil || !rb.Status.Rebuilding {
		t.Fatalf("rebuild = %+v, %v", rb, err)
	}
	if _, err := c.Rebuild(ctx, RebuildRequest{Name: "nope"}); !errors.Is(err, &bus.Error{Type: bus.ReasonNotFound}) {
		t.Errorf("rebuild of an unknown projection: %v", err)
	}
	if err := server.Close(); err != nil { // the Bus
		t.Fatal(err)
	}
	if _, err := c.List(ctx, ListRequest{}); !errors.Is(err, ErrNoServer) {
		t.Errorf("after Close: %v", err)
	}
}
