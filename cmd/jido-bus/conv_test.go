package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/natsbus"
	"github.com/jido-bus/jido-bus/bus/natsserver/natstest"
	"github.com/jido-bus/jido-bus/conversation"
	"github.com/jido-bus/jido-bus/conversation/convapi"
	"github.com/jido-bus/jido-bus/conversation/views"
	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/jido-bus/jido-bus/internal/testkit"
	"github.com/jido-bus/jido-bus/projections"
	"github.com/jido-bus/jido-bus/projections/projectionapi"
)

// nobody is a NATS URL nothing listens on.
const nobody = "nats://127.0.0.1:1"

func convEvent(t *testing.T, typ, id, data string) bus.Signal {
	t.Helper()
	s := bus.Signal{}
	s.SetSpecVersion(bus.SpecVersion)
	s.SetType(typ)
	s.SetID(id)
	s.SetSource("/cli-test")
	s.SetTime(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	s.SetExtension(bus.ExtCausationID, "c0")
	if err := bus.SetJSONData(&s, json.RawMessage(data)); err != nil {
		t.Fatal(err)
	}
	return s
}

// seedConversation writes a conversation with a pending tool call into the
// log of dataDir.
func seedConversation(t *testing.T, dataDir string) {
	t.Helper()
	l, err := eventlog.Open(logDir(dataDir), eventlog.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, err = l.Append(context.Background(), conversation.Stream("p1/c1"), eventlog.NoStream,
		convEvent(t, conversation.Started, "e1", `{"project_id":"p1","conversation_id":"c1","title":"Hello"}`),
		convEvent(t, conversation.UserMessage, "e2", `{"text":"list the files"}`),
		convEvent(t, conversation.ToolRequested, "e3", `{"call_id":"t1","name":"ls","args":{"dir":"."}}`),
		convEvent(t, conversation.ToolCompleted, "e4", `{"call_id":"t1","output":"a.go b.go"}`),
		convEvent(t, conversation.ToolRequested, "e5", `{"call_id":"t2","name":"cat"}`),
	)
	if err != nil {
		t.Fatal(err)
	}
}

func TestConvAndProjectionCommandsOnTheDataDir(t *testing.T) {
	defer goleak.VerifyNone(t)
	dir := t.TempDir()
	seedConversation(t, dir)
	off := []string{"--data-dir", dir}
	run := func(args ...string) string {
		t.Helper()
		out, err := runRoot(t, append(args, off...)...)
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		return out
	}

	out := run("conv", "ls")
	if !strings.Contains(out, "p1/c1") || !strings.Contains(out, "awaiting_tools") {
		t.Errorf("conv ls:\n%s", out)
	}
	out = run("conv", "show", "p1/c1")
	for _, want := range []string{"started    Hello", "user       list the files", `t1 ls {"dir":"."} -> completed: "a.go b.go" (seq 4)`, "t2 cat -> requested"} {
		if !strings.Contains(out, want) {
			t.Errorf("conv show lacks %q:\n%s", want, out)
		}
	}
	out = run("conv", "show", "p1/c1", "--view", "status", "--at", "3")
	if !strings.Contains(out, "pending tool call: t1 ls") || strings.Contains(out, "t2") {
		t.Errorf("conv show --view status --at 3:\n%s", out)
	}
	out = run("conv", "show", "p1/c1", "--view", "llm_context", "--json")
	var show convapi.ShowReply
	if err := json.Unmarshal([]byte(out), &show); err != nil || show.View != "llm_context" || !strings.Contains(string(show.State), `"tool_call_id":"t1"`) {
		t.Errorf("conv show --json: %v\n%s", err, out)
	}
	if _, err := runRoot(t, append([]string{"conv", "show", "p1/c1", "--view", "bogus"}, off...)...); err == nil || !strings.Contains(err.Error(), "unknown view") {
		t.Errorf("conv show --view bogus: %v", err)
	}
	if _, err := runRoot(t, append([]string{"conv", "show", "p1/zzz"}, off...)...); err == nil || !strings.Contains(err.Error(), "no conversation p1/zzz") {
		t.Errorf("conv show of a missing conversation: %v", err)
	}

	// A fork is a live conversation: its agent needs a running node
	// (TestForkedConversationLives forks through one).
	if out, err := runRoot(t, append([]string{"conv", "fork", "p1/c1", "--at", "3", "--as", "p1/alt"}, off...)...); err == nil || !strings.Contains(err.Error(), "needs a running node") {
		t.Errorf("conv fork on the data dir: %v\n%s", err, out)
	}
	if _, err := runRoot(t, append([]string{"conv", "fork", "p1/c1"}, off...)...); err == nil {
		t.Error("conv fork without --at succeeded")
	}

	out = run("projection", "ls")
	for _, name := range views.Views() {
		if !strings.Contains(out, name) {
			t.Errorf("projection ls lacks %s:\n%s", name, out)
		}
	}
	out = run("projection", "ls", "--json")
	var shape struct{ Projections []projections.Status }
	err := json.Unmarshal([]byte(out), &shape)
	list := shape.Projections
	if err != nil || len(list) != 4 || list[0].Keys != 1 || list[0].Lag != 0 {
		t.Errorf("projection ls --json: %v\n%s", err, out)
	}
	out = run("projection", "get", "status", "p1/c1")
	if !strings.Contains(out, `"state": "awaiting_tools"`) {
		t.Errorf("projection get:\n%s", out)
	}
	out = run("projection", "get", "status", "p1/c1", "--at", "2")
	if !strings.Contains(out, `"state": "idle"`) {
		t.Errorf("projection get --at 2:\n%s", out)
	}
	out = run("projection", "rebuild", "diagnostics")
	if !strings.Contains(out, "rebuilt diagnostics") || !strings.Contains(out, "into 1 keys") {
		t.Errorf("projection rebuild:\n%s", out)
	}
	if _, err := runRoot(t, append([]string{"projection", "rebuild", "nope"}, off...)...); err == nil {
		t.Error("rebuild of an unknown projection succeeded")
	}
	if _, err := runRoot(t, "conv", "ls", "--data-dir", filepath.Join(dir, "missing")); err == nil || !strings.Contains(err.Error(), "no event log") {
		t.Errorf("conv ls on a missing data dir: %v", err)
	}
}

// TestConvCommandsThroughARunningNode serves the API from an embedded NATS
// server, as `jido-bus serve` does, and reads through it.
func TestConvCommandsThroughARunningNode(t *testing.T) {
	// Registered first, so it runs after the cleanups that stop NATS.
	t.Cleanup(func() { goleak.VerifyNone(t) })
	dir := t.TempDir()
	seedConversation(t, dir)
	l, err := eventlog.Open(logDir(dir), eventlog.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	store, err := projections.OpenStore(projectionsDir(dir), projections.StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	r, err := projections.NewRunner(l, store, projections.Options{}, views.Projections(views.Options{})...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	srv := natstest.RunServer(t)
	nc := natstest.Connect(t, srv)
	api := natsbus.New(nc, natsbus.Options{})
	if err := projectionapi.Serve(api, projectionapi.Local{Runner: r}); err != nil {
		t.Fatal(err)
	}
	defer api.Shutdown(context.Background())
	// The conv verbs that read, as a node serves them (convapi.Serve), on
	// the read models alone.
	reader := convapi.Reader{Runner: r, Log: l}
	for verb, fn := range map[string]natsbus.APIFunc{convapi.VerbShow: natsbus.Typed(reader.Show), convapi.VerbList: natsbus.Typed(reader.List)} {
		if err := api.HandleAPI(api.Subjects().API(convapi.Area, verb), fn); err != nil {
			t.Fatal(err)
		}
	}
	// The node holds the data dir; the commands must not need it.
	on := []string{"--nats-url", srv.ClientURL()}
	var out string
	testkit.EventuallyNil(t, "conv show via NATS", func() error {
		// Refused while the runner is still catching up.
		out, err = runRoot(t, append([]string{"conv", "show", "p1/c1"}, on...)...)
		return err
	})
	if !strings.Contains(out, "t2 cat -> requested") {
		t.Fatalf("conv show via NATS: %v\n%s", err, out)
	}
	out, err = runRoot(t, append([]string{"projection", "rebuild", "timeline"}, on...)...)
	if err != nil || !strings.Contains(out, "rebuilt timeline") {
		t.Fatalf("projection rebuild via NATS: %v\n%s", err, out)
	}
	out, err = runRoot(t, append([]string{"conv", "ls", "--json"}, on...)...)
	if err != nil || !strings.Contains(out, `"conv":"p1/c1"`) {
		t.Fatalf("conv ls via NATS: %v\n%s", err, out)
	}
}
