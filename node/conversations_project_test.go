package node

import (
	"context"
	"os"
	"testing"

	"github.com/jido-bus/jido-bus/agents/runtime"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/conversation/convapi"
	"github.com/jido-bus/jido-bus/projects"
)

// TestConvSendGoesThroughTheProject: conv send to a new conversation of an
// open project starts it as the project's child (recorded in the project's
// stream, stopped when the project closes, its id taken for conv start),
// while one of no open project is refused.
func TestConvSendGoesThroughTheProject(t *testing.T) {
	n := startNode(t, t.TempDir())
	defer func() {
		if err := n.Shutdown(context.Background()); err != nil {
			t.Error(err)
		}
	}()
	ctx := context.Background()
	root := t.TempDir()
	if err := os.WriteFile(root+"/main.go", []byte("package main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e := n.Projects()
	if _, err := e.Open(ctx, projects.OpenRequest{Root: root, ID: "p1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := n.convSend(ctx, []byte(`{"conv":"p1/x","text":"hello"}`)); err != nil {
		t.Fatal(err)
	}
	// A second message goes to the running conversation.
	if _, err := n.convSend(ctx, []byte(`{"conv":"p1/x","text":"again"}`)); err != nil {
		t.Fatal(err)
	}
	info, err := n.Runtime().State("p1/x")
	if err != nil || info.Parent == nil || info.Parent.ID != "p1" {
		t.Fatalf("p1/x's agent: %+v %v, want a child of p1", info, err)
	}
	if cs := e.Conversations("p1"); len(cs) != 1 || cs[0] != "x" {
		t.Fatalf("p1's conversations: %v, want x", cs)
	}
	if _, err := n.conv.Start(ctx, convapi.StartRequest{Project: "p1", Conversation: "x"}); bus.ErrorType(err) != "already_exists" {
		t.Fatalf("conv start of x after conv send: %v, want already_exists", err)
	}

	// No open project "free": nothing starts (conv_owned_test.go).
	if _, err := n.convSend(ctx, []byte(`{"conv":"free/y","text":"hello"}`)); bus.ErrorType(err) != bus.ReasonNotFound {
		t.Fatalf("conv send free/y with no project free: %v, want not_found", err)
	}

	if err := e.CloseProject(ctx, "p1", "done"); err != nil {
		t.Fatal(err)
	}
	if info, err := n.Runtime().State("p1/x"); err == nil && info.Status != runtime.StatusStopped {
		t.Fatalf("p1/x runs after p1 closed: %+v", info)
	}
}
