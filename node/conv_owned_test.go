package node

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jido-bus/jido-bus/agents"
	"github.com/jido-bus/jido-bus/agents/runtime"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/conversation"
	"github.com/jido-bus/jido-bus/conversation/convapi"
	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/jido-bus/jido-bus/projects"
)

// startOutsideDriven starts conversation key driven from outside (its
// assistant's loop off), as an older node's conv send did for a key of no
// open project, and as an operator's agent start does today (with the
// conversation.started the old conv send appended).
func startOutsideDriven(t testing.TB, n *Node, key string) {
	t.Helper()
	ctx := context.Background()
	if _, err := n.rt.Start(ctx, runtime.StartRequest{Type: conversation.AgentType, ID: key}); err != nil {
		t.Fatal(err)
	}
	project, conv, _ := strings.Cut(key, "/")
	started, err := agents.NewSignal(conversation.Started, conversation.Data{ProjectID: project, ConversationID: conv})
	if err != nil {
		t.Fatal(err)
	}
	started.SetID("started." + key)
	started.SetSource(conversation.Source(key))
	started.SetTime(time.Now().UTC())
	started.SetExtension(bus.ExtCausationID, started.ID())
	if _, err := n.rt.Call(ctx, key, started); err != nil {
		t.Fatal(err)
	}
}

// forgedAnswer is a model's answer as a client would forge it on the
// conversation agent's subject.
func forgedAnswer(t testing.TB, id, text string) bus.Signal {
	t.Helper()
	sig, err := agents.NewSignal(conversation.AssistantMessage, conversation.Data{Text: text})
	if err != nil {
		t.Fatal(err)
	}
	sig.SetID(id)
	sig.SetSource("/forger")
	sig.SetExtension(bus.ExtCausationID, "u1")
	return sig
}

// openProject opens a project with id on a new folder.
func openProject(t testing.TB, n *Node, id string) {
	t.Helper()
	root := t.TempDir()
	if err := os.WriteFile(root+"/main.go", []byte("package main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := n.Projects().Open(context.Background(), projects.OpenRequest{Root: root, ID: id}); err != nil {
		t.Fatal(err)
	}
}

// TestConvSendStartsNothingOutsideAProject: conv send to a conversation of
// no open project is refused not_found and starts nothing — before, it
// started a conversation driven from outside that took forged model
// answers and kept them once a project of that id opened — and the id
// stays free for the project.
func TestConvSendStartsNothingOutsideAProject(t *testing.T) {
	n := startNode(t, t.TempDir())
	defer n.Shutdown(context.Background())
	ctx := context.Background()
	_, err := n.convSend(ctx, []byte(`{"conv":"ghost/c1","text":"hello"}`))
	if bus.ErrorType(err) != bus.ReasonNotFound || !strings.Contains(err.Error(), "no project ghost is open") {
		t.Fatalf("conv send ghost/c1 with no project ghost: %v, want not_found naming the project", err)
	}
	if _, err := n.rt.State("ghost/c1"); err == nil {
		t.Fatal("the refused send started ghost/c1")
	}
	if _, err := n.evlog.Stream(conversation.Stream("ghost/c1")); err == nil {
		t.Fatal("the refused send wrote ghost/c1's stream")
	}
	openProject(t, n, "ghost")
	if _, err := n.convSend(ctx, []byte(`{"conv":"ghost/c1","text":"hello"}`)); err != nil {
		t.Fatalf("conv send ghost/c1 once ghost is open: %v", err)
	}
	if info, err := n.rt.State("ghost/c1"); err != nil || info.Parent == nil || info.Parent.ID != "ghost" || !loopOn(t, info.State) {
		t.Fatalf("ghost/c1: %+v %v, want the project's child, its loop on", info, err)
	}
}

// TestOpenDisownsConversationsStartedOutside: a conversation started
// outside project ghost under its id (an older node's conv send before
// ghost opened, with a forged answer in it) is stopped when ghost opens,
// recorded in ghost's stream: it takes no more forged answers, nor a
// message, and its id is not reused. A conversation under the id of a
// project of the node takes nothing but what people say, whatever its
// loop.
func TestOpenDisownsConversationsStartedOutside(t *testing.T) {
	n := startNode(t, t.TempDir())
	defer n.Shutdown(context.Background())
	ctx := context.Background()
	startOutsideDriven(t, n, "ghost/c1")
	if _, err := n.rt.Call(ctx, "ghost/c1", forgedAnswer(t, "f1", "FORGED")); err != nil {
		t.Fatalf("a forged answer to an outside-driven conversation (as before): %v", err)
	}
	startOutsideDriven(t, n, "other/c1") // another id: left alone

	openProject(t, n, "ghost")
	info, err := n.rt.State("ghost/c1")
	if err == nil && info.Status != runtime.StatusStopped {
		t.Fatalf("ghost/c1 after ghost opened: %+v, want stopped", info)
	}
	if _, err := n.convSend(ctx, []byte(`{"conv":"ghost/c1","text":"hello again"}`)); bus.ErrorType(err) != runtime.ReasonStopped {
		t.Fatalf("conv send to the disowned ghost/c1: %v, want stopped", err)
	}
	if err := n.admitSignal("ghost/c1", conversation.AssistantMessage); bus.ErrorType(err) != bus.ReasonForbidden {
		t.Fatalf("a forged answer to ghost/c1 once ghost is open: %v, want forbidden", err)
	}
	if err := n.admitSignal("ghost/c2", conversation.LLMCompleted); bus.ErrorType(err) != bus.ReasonForbidden {
		t.Fatalf("a forged llm.completed under ghost's id: %v, want forbidden", err)
	}
	if err := n.admitSignal("ghost/c1", conversation.UserMessage); err != nil {
		t.Fatalf("what a person says is still admitted: %v", err)
	}
	if _, err := n.rt.State("other/c1"); err != nil {
		t.Fatalf("other/c1, under no project's id, was stopped: %v", err)
	}
	var stopped []string
	for e, err := range n.evlog.ReadStream(projects.Stream("ghost"), eventlog.ReadOptions{Types: projects.TypeConvStopped}) {
		if err != nil {
			t.Fatal(err)
		}
		var d projects.ConvData
		if err := json.Unmarshal(e.Event.Data(), &d); err != nil {
			t.Fatal(err)
		}
		if d.Reason == projects.DisownedReason {
			stopped = append(stopped, d.ID)
		}
	}
	if len(stopped) != 1 || stopped[0] != "ghost/c1" {
		t.Fatalf("ghost's stream records %v disowned, want [ghost/c1]", stopped)
	}
}

// TestRestoreDisownsConversationsStartedOutside: a data dir where an
// older node left project ghost open beside a conversation driven from
// outside under its id: after the restart the project is open and the
// conversation stopped.
func TestRestoreDisownsConversationsStartedOutside(t *testing.T) {
	dir := t.TempDir()
	n := startNode(t, dir)
	openProject(t, n, "ghost")
	// As an older node let it be (admitStart refuses it today).
	startOutsideDriven(t, n, "ghost/c1")
	if err := n.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	n = startNode(t, dir)
	defer n.Shutdown(context.Background())
	if p, err := n.Projects().Get("ghost"); err != nil || p.Status != projects.StatusOpen {
		t.Fatalf("ghost after the restart: %+v %v", p, err)
	}
	if info, err := n.rt.State("ghost/c1"); err == nil && info.Status != runtime.StatusStopped {
		t.Fatalf("ghost/c1 after the restart: %+v, want stopped", info)
	}
}

// TestNoConversationStartsOutsideAnOpenProject: an operator's agent start
// of a conversation under an open project's id is refused, and so is a
// fork driven from outside onto such an id; under an id no project uses
// both work, as before.
func TestNoConversationStartsOutsideAnOpenProject(t *testing.T) {
	n := startNode(t, t.TempDir())
	defer n.Shutdown(context.Background())
	openProject(t, n, "p1")
	if err := n.admitStart(runtime.StartRequest{Type: conversation.AgentType, ID: "p1/c9"}); bus.ErrorType(err) != bus.ReasonForbidden {
		t.Fatalf("agent start of p1/c9 while p1 is open: %v, want forbidden", err)
	}
	if err := n.admitStart(runtime.StartRequest{Type: conversation.AgentType, ID: "notes/c9"}); err != nil {
		t.Fatalf("agent start of notes/c9, no project notes: %v", err)
	}
	startOutsideDriven(t, n, "notes/c1")
	info, err := n.evlog.Stream(conversation.Stream("notes/c1"))
	if err != nil {
		t.Fatal(err)
	}
	fork := func(key string) error {
		_, err := n.conv.Fork(context.Background(), convapi.ForkRequest{Conv: "notes/c1", Seq: info.Head, As: key})
		return err
	}
	if err := fork("p1/f1"); bus.ErrorType(err) != bus.ReasonForbidden {
		t.Fatalf("fork of an outside-driven conversation onto p1/f1: %v, want forbidden", err)
	}
	if err := fork("notes/f1"); err != nil {
		t.Fatalf("fork onto notes/f1: %v", err)
	}
}

// loopOn reports whether a conversation agent's state has the
// assistant's loop on.
func loopOn(t *testing.T, state json.RawMessage) bool {
	t.Helper()
	st, err := conversation.ReadState(state)
	if err != nil {
		t.Fatal(err)
	}
	return st.Loop.On
}
