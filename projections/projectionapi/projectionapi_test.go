package projectionapi

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/natsserver/natstest"
	"github.com/jido-bus/jido-bus/conversation"
	"github.com/jido-bus/jido-bus/conversation/views"
	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/jido-bus/jido-bus/projections"
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
// what Local answers, errors included. (The conversations' own verbs are
// conversation/convapi's.)
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
	local := Local{Runner: r}
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

	rb, err := c.Rebuild(ctx, RebuildRequest{Name: "diagnostics"})
	if err != nil || !rb.Status.Rebuilding {
		t.Fatalf("rebuild = %+v, %v", rb, err)
	}
	if _, err := c.Rebuild(ctx, RebuildRequest{Name: "nope"}); !errors.Is(err, &bus.Error{Type: bus.ReasonNotFound}) {
		t.Errorf("rebuild of an unknown projection: %v", err)
	}
	if err := server.Shutdown(context.Background()); err != nil { // the Bus
		t.Fatal(err)
	}
	if _, err := c.List(ctx, ListRequest{}); !errors.Is(err, ErrNoServer) {
		t.Errorf("after Close: %v", err)
	}
}
