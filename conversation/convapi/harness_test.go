package convapi_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/agents"
	"github.com/jido-bus/jido-bus/agents/runtime"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/natsbus"
	"github.com/jido-bus/jido-bus/bus/natsserver/natstest"
	"github.com/jido-bus/jido-bus/conversation"
	"github.com/jido-bus/jido-bus/conversation/convapi"
	"github.com/jido-bus/jido-bus/conversation/views"
	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/jido-bus/jido-bus/projections"
)

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

// event is a conversation event as a client would write it.
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

// fakeProjects are the node's projects as a Service sees them: the ids
// in open, and the starts and stops recorded.
type fakeProjects struct {
	mu      sync.Mutex
	open    []string
	records []string
}

func (f *fakeProjects) Has(id string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Contains(f.open, id)
}

func (f *fakeProjects) Usable(id string) error {
	if !f.Has(id) {
		return bus.Errorf(bus.ReasonNotFound, "no project %q is open", id)
	}
	return nil
}

func (f *fakeProjects) Conversations(string) []string { return nil }

func (f *fakeProjects) ConversationStarted(_ context.Context, id, conv, _ string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.records = append(f.records, "started "+id+"/"+conv)
	return nil
}

func (f *fakeProjects) ConversationStopped(_ context.Context, id, conv, _ string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.records = append(f.records, "stopped "+id+"/"+conv)
	return nil
}

// service is a Service on a runtime of its own, served on a NATS server
// of its own; its read models are folded when the test says (CatchUp).
type service struct {
	*convapi.Service
	log      *eventlog.Log
	runner   *projections.Runner
	rt       *runtime.Runtime
	nc       *nats.Conn
	projects *fakeProjects
}

func newService(t *testing.T, open ...string) *service {
	t.Helper()
	l, store := openLogAndStore(t, t.TempDir())
	types := agents.NewRegistry()
	def, err := conversation.NewAgent()
	if err != nil {
		t.Fatal(err)
	}
	if err := types.Register(def); err != nil {
		t.Fatal(err)
	}
	codec := agents.NewDirectiveCodec()
	if err := conversation.RegisterDirectives(codec); err != nil {
		t.Fatal(err)
	}
	rt, err := runtime.New(runtime.Config{Store: l, Types: types, Directives: codec, Streams: map[string]string{conversation.AgentType: "conversation"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Shutdown(context.Background()) })
	r, err := projections.NewRunner(l, store, projections.Options{}, views.Projections(views.Options{})...)
	if err != nil {
		t.Fatal(err)
	}
	srv := natstest.RunServer(t)
	b := natsbus.New(natstest.Connect(t, srv), natsbus.Options{})
	t.Cleanup(func() { _ = b.Shutdown(context.Background()) })
	fake := &fakeProjects{open: open}
	svc, err := convapi.New(convapi.Config{Runtime: rt, Log: l, Runner: r, Projects: fake, Bus: b,
		Now: func() time.Time { return time.Date(2025, 2, 1, 0, 0, 0, 0, time.UTC) }})
	if err != nil {
		t.Fatal(err)
	}
	if err := convapi.Serve(b, svc); err != nil {
		t.Fatal(err)
	}
	return &service{Service: svc, log: l, runner: r, rt: rt, nc: natstest.Connect(t, srv), projects: fake}
}

// catchUp folds what the log holds into the read models.
func (s *service) catchUp(t *testing.T) {
	t.Helper()
	if err := s.runner.CatchUp(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
}

// client is a convapi.Client on the service's NATS server.
func (s *service) client() convapi.Client { return convapi.Client{NC: s.nc} }
