package convapi_test

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jido-bus/jido-bus/agents/runtime"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/conversation"
	"github.com/jido-bus/jido-bus/conversation/convapi"
	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/jido-bus/jido-bus/node"
	"github.com/jido-bus/jido-bus/projects"
)

// startNode starts a node in dataDir, listening on no port, with file
// watching off.
func startNode(t *testing.T, dataDir string) *node.Node {
	t.Helper()
	n, err := node.Start(context.Background(), node.Config{
		DataDir: dataDir, NoSync: true,
		NATS:     node.NATSConfig{DontListen: true},
		Projects: func(c *projects.Config) { c.NoWatch = true },
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func closeNode(t *testing.T, n *node.Node) {
	t.Helper()
	if err := n.Shutdown(context.Background()); err != nil {
		t.Errorf("close node: %v", err)
	}
}

// nodeWithProject starts a node, closed at the end of the test, with the
// project p1 open on a folder of one file.
func nodeWithProject(t *testing.T) *node.Node {
	t.Helper()
	n := startNode(t, t.TempDir())
	t.Cleanup(func() { closeNode(t, n) })
	if _, err := n.Projects().Open(context.Background(), projects.OpenRequest{Root: projectDir(t), ID: "p1"}); err != nil {
		t.Fatal(err)
	}
	return n
}

// projectDir is a project folder with one file.
func projectDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// projectTypes are the types of the entries project id's engine wrote in
// its stream (the runtime's own jido.* records left out).
func projectTypes(t *testing.T, n *node.Node, id string) []string {
	t.Helper()
	var types []string
	for e, err := range n.Log().ReadStream(projects.Stream(id), eventlog.ReadOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(e.Event.Type(), "jido.") {
			types = append(types, e.Event.Type())
		}
	}
	return types
}

// convIDs lists project's running conversations by id: the children of
// its agent.
func convIDs(t *testing.T, n *node.Node, project string) []string {
	t.Helper()
	info, err := n.Runtime().State(project)
	if err != nil {
		t.Fatalf("project %s: %v", project, err)
	}
	return conversation.Under(project, maps.Values(info.Children))
}

// stateConversations is the conversations list of project's agent state.
func stateConversations(t *testing.T, n *node.Node, project string) []string {
	t.Helper()
	info, err := n.Runtime().State(project)
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Conversations []string `json:"conversations"`
	}
	if err := json.Unmarshal(info.State, &st); err != nil {
		t.Fatal(err)
	}
	return st.Conversations
}

// stopped reports whether agent id has stopped: gone, or stopped and
// finishing its stop record.
func stopped(n *node.Node, id string) bool {
	info, err := n.Runtime().State(id)
	return err != nil || info.Status == runtime.StatusStopped
}

func wantErrType(t *testing.T, what string, err error, typ string) {
	t.Helper()
	if err == nil || bus.ErrorType(err) != typ {
		t.Fatalf("%s: %v, want %s", what, err, typ)
	}
}

// TestConversationsAreChildrenOfTheirProject: a conversation started in a
// project is the child of the project's agent, recorded in the project's
// stream and state; ids are checked and never reused; stopping one and
// closing the project stop their agents.
func TestConversationsAreChildrenOfTheirProject(t *testing.T) {
	n := startNode(t, t.TempDir())
	defer closeNode(t, n)
	e, rt, svc := n.Projects(), n.Runtime(), n.Conversations()
	ctx := context.Background()
	if _, err := e.Open(ctx, projects.OpenRequest{Root: projectDir(t), ID: "p1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Open(ctx, projects.OpenRequest{Root: projectDir(t), ID: "p2"}); err != nil {
		t.Fatal(err)
	}
	c1, err := svc.Start(ctx, convapi.StartRequest{Project: "p1", Conversation: "c1"})
	if err != nil {
		t.Fatal(err)
	}
	if c1.ID != "p1/c1" || c1.Project != "p1" || c1.Conversation != "c1" || c1.Stream != "conversation/p1/c1" {
		t.Fatalf("conv start: %+v", c1)
	}
	info, err := rt.State("p1/c1")
	if err != nil || info.Type != "conversation" || info.Parent == nil || info.Parent.ID != "p1" {
		t.Fatalf("p1/c1's agent: %+v %v", info, err)
	}
	fresh, err := svc.Start(ctx, convapi.StartRequest{Project: "p1"})
	if err != nil || bus.ValidateAgentID(fresh.Conversation) != nil || fresh.ID != "p1/"+fresh.Conversation {
		t.Fatalf("conv start with no id: %+v %v", fresh, err)
	}
	// The same conversation id in another project is another conversation.
	if _, err := svc.Start(ctx, convapi.StartRequest{Project: "p2", Conversation: "c1"}); err != nil {
		t.Fatalf("c1 in p2: %v", err)
	}

	_, err = svc.Start(ctx, convapi.StartRequest{Project: "p1", Conversation: "c1"})
	wantErrType(t, "c1 again", err, "already_exists")
	_, err = svc.Start(ctx, convapi.StartRequest{Project: "nope", Conversation: "c1"})
	wantErrType(t, "a conversation of an unknown project", err, bus.ReasonNotFound)
	for _, bad := range []string{"a/b", "-x", "a.b", "a b", ".."} {
		_, err = svc.Start(ctx, convapi.StartRequest{Project: "p1", Conversation: bad})
		wantErrType(t, "conversation id "+bad, err, bus.ReasonInvalidRequest)
	}
	if _, err := rt.State("p1/a"); err == nil {
		t.Fatal("a refused start left an agent")
	}

	want := []string{"p1/c1", fresh.ID}
	slices.Sort(want)
	if got := convIDs(t, n, "p1"); !slices.Equal(got, want) {
		t.Fatalf("conv ls p1: %v, want %v", got, want)
	}
	if got := stateConversations(t, n, "p1"); !slices.Equal(got, []string{"c1", fresh.Conversation}) {
		t.Fatalf("p1's state conversations: %v", got)
	}

	if err := stop(svc, "p1", "c1", "done"); err != nil {
		t.Fatal(err)
	}
	if !stopped(n, "p1/c1") {
		t.Fatal("p1/c1 runs after conv stop")
	}
	if got := convIDs(t, n, "p1"); !slices.Equal(got, []string{fresh.ID}) {
		t.Fatalf("conv ls after stop: %v", got)
	}
	if got := stateConversations(t, n, "p1"); !slices.Equal(got, []string{fresh.Conversation}) {
		t.Fatalf("state conversations after stop: %v", got)
	}
	wantErrType(t, "stop c1 again", stop(svc, "p1", "c1", ""), bus.ReasonNotFound)
	wantErrType(t, "stop p2's conversation through p1", stop(svc, "p1", "zz", ""), bus.ReasonNotFound)
	// A stopped conversation's id stays used: its stream has its history.
	_, err = svc.Start(ctx, convapi.StartRequest{Project: "p1", Conversation: "c1"})
	wantErrType(t, "restart a stopped conversation", err, "already_exists")

	types := projectTypes(t, n, "p1")
	if want := []string{projects.TypeStarted, projects.TypeAssetsLoaded, projects.TypeConvStarted, projects.TypeConvStarted, projects.TypeConvStopped}; !slices.Equal(types, want) {
		t.Fatalf("p1's stream: %v, want %v", types, want)
	}

	// Closing the project stops its conversations, by the time Close returns.
	if err := e.CloseProject(ctx, "p1", "done"); err != nil {
		t.Fatal(err)
	}
	if _, err := rt.State(fresh.ID); err == nil {
		t.Fatalf("%s runs after its project closed", fresh.ID)
	}
	if _, err := rt.State("p2/c1"); err != nil {
		t.Fatalf("closing p1 stopped p2's conversation: %v", err)
	}
	_, err = svc.Start(ctx, convapi.StartRequest{Project: "p1", Conversation: "c9"})
	wantErrType(t, "a conversation of a closed project", err, bus.ReasonNotFound)
}

// TestRestartBringsConversationsBack: after a restart a project's
// conversations run again as its children, and closing it stops them.
func TestRestartBringsConversationsBack(t *testing.T) {
	dataDir := t.TempDir()
	n := startNode(t, dataDir)
	ctx := context.Background()
	if _, err := n.Projects().Open(ctx, projects.OpenRequest{Root: projectDir(t), ID: "p1"}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"c1", "c2"} {
		if _, err := n.Conversations().Start(ctx, convapi.StartRequest{Project: "p1", Conversation: c}); err != nil {
			t.Fatal(err)
		}
	}
	if err := stop(n.Conversations(), "p1", "c2", ""); err != nil {
		t.Fatal(err)
	}
	closeNode(t, n)

	n = startNode(t, dataDir)
	defer closeNode(t, n)
	e := n.Projects()
	if got := convIDs(t, n, "p1"); !slices.Equal(got, []string{"p1/c1"}) {
		t.Fatalf("conv ls after restart: %v", got)
	}
	if got := stateConversations(t, n, "p1"); !slices.Equal(got, []string{"c1"}) {
		t.Fatalf("state conversations after restart: %v", got)
	}
	if info, err := n.Runtime().State("p1/c1"); err != nil || info.Parent == nil || info.Parent.ID != "p1" {
		t.Fatalf("p1/c1 after restart: %+v %v", info, err)
	}
	if err := e.CloseProject(ctx, "p1", ""); err != nil {
		t.Fatal(err)
	}
	if !stopped(n, "p1/c1") {
		t.Fatal("p1/c1 runs after its project closed")
	}
}

// stop stops conversation conv of project through svc, as conv.stop does.
func stop(svc *convapi.Service, project, conv, reason string) error {
	_, err := svc.Stop(context.Background(), convapi.StopRequest{Project: project, Conversation: conv, Reason: reason})
	return err
}
