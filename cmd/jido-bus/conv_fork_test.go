package main

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/jido-bus/jido-bus/internal/testkit"
	"github.com/jido-bus/jido-bus/node"
)

// startNode starts a node on dataDir with NATS on a free port.
func startNode(t *testing.T, dataDir string) *node.Node {
	t.Helper()
	n, err := node.Start(context.Background(), node.Config{DataDir: dataDir, NATS: node.NATSConfig{Listen: "127.0.0.1:0"}, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// runUntil runs a command until it succeeds with an output that contains
// every want (the projections fold what a node commits a moment later);
// a timeout says the last error and output.
func runUntil(t *testing.T, args []string, want ...string) string {
	t.Helper()
	var out string
	testkit.EventuallyNil(t, fmt.Sprintf("%v to show %q", args, want), func() error {
		var err error
		out, err = runRoot(t, args...)
		if err != nil {
			return fmt.Errorf("%w:\n%s", err, out)
		}
		for _, w := range want {
			if !strings.Contains(out, w) {
				return fmt.Errorf("output lacks %q:\n%s", w, out)
			}
		}
		return nil
	})
	return out
}

// TestForkedConversationLives is issue 11 defect 15: a fork was only
// events in a stream, with no agent, so `conv send` to it was not_found
// and starting its agent already_exists. A fork is a live conversation,
// and it stays one across a restart.
func TestForkedConversationLives(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	dir := t.TempDir()
	n := startNode(t, dir)
	defer func() { n.Shutdown(context.Background()) }()
	// --data-dir points where nothing is: every command must use the node.
	url := func() []string { return []string{"--nats-url", n.URL()} }
	run := func(args ...string) string {
		t.Helper()
		out, err := runRoot(t, append(args, url()...)...)
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		return out
	}
	// Driven from outside (no project demo): an operator starts it.
	run("agent", "start", "conversation", "--id", "demo/c1")
	run("conv", "send", "demo/c1", "first question")
	run("conv", "send", "demo/c1", "second question")
	runUntil(t, append([]string{"conv", "show", "demo/c1"}, url()...), "second question")
	// The stream: the agent's start record, conversation.started, the
	// first message at 4 and the second at 6, each followed by the
	// agent's decision; the fork keeps history up to the first message.
	seq := "5"
	out := run("conv", "show", "demo/c1", "--at", seq)
	if !strings.Contains(out, "first question") || strings.Contains(out, "second question") {
		t.Fatalf("conv show --at %s does not end at the first message:\n%s", seq, out)
	}
	out = run("conv", "fork", "demo/c1", "--at", seq)
	if !strings.Contains(out, "into demo/c1-fork-5") {
		t.Fatalf("conv fork:\n%s", out)
	}
	fork := "demo/c1-fork-5"
	// The agent's state counts the history it was handed.
	out = run("agent", "state", fork, "-o", "json")
	if !strings.Contains(out, `"status":"running"`) || !strings.Contains(out, `"type":"conversation"`) || !strings.Contains(out, `"events":2`) {
		t.Errorf("agent state of the fork:\n%s", out)
	}
	run("conv", "send", fork, "a different second question")
	out = runUntil(t, append([]string{"conv", "show", fork}, url()...), "first question", "a different second question")
	if strings.Index(out, "first question") > strings.Index(out, "a different second question") {
		t.Errorf("timeline of the fork is out of order:\n%s", out)
	}
	if strings.Contains(out, "user       second question") {
		t.Errorf("the fork holds the parent's message after the fork point:\n%s", out)
	}
	if out := run("agent", "state", fork); !strings.Contains(out, `"events":3`) {
		t.Errorf("agent state of the fork after a message:\n%s", out)
	}

	// What an operator may get wrong, and forking a fork.
	fails := func(want string, args ...string) {
		t.Helper()
		out, err := runRoot(t, append(args, url()...)...)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%v: %v, want an error with %q\n%s", args, err, want, out)
		}
	}
	fails("conflict", "conv", "fork", "demo/c1", "--at", "5", "--as", fork)
	fails("must have another id", "conv", "fork", "demo/c1", "--at", "5", "--as", "demo/c1")
	fails("ends at seq", "conv", "fork", "demo/c1", "--at", "99")
	fails("not_found", "conv", "fork", "demo/none", "--at", "2")
	run("conv", "fork", fork, "--at", "4", "--as", "demo/grandchild")
	run("conv", "send", "demo/grandchild", "third branch")
	out = runUntil(t, append([]string{"conv", "show", "demo/grandchild"}, url()...), "first question", "third branch")
	if strings.Contains(out, "different") {
		t.Errorf("the fork of a fork holds its parent's message after the fork point:\n%s", out)
	}

	n.Shutdown(context.Background())
	n = startNode(t, dir)
	run("conv", "send", fork, "after the restart")
	runUntil(t, append([]string{"conv", "show", fork}, url()...), "first question", "a different second question", "after the restart")
}

// TestStoppedConversationIdIsNotReused: a stopped conversation's id
// restarted an agent with an empty state on the old stream, after its
// stopped record, whether through `conv send` or a fork onto that id
// (the runtime took the start record for a repeat of the first one).
func TestStoppedConversationIdIsNotReused(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	n := startNode(t, t.TempDir())
	defer n.Shutdown(context.Background())
	url := []string{"--nats-url", n.URL()}
	run := func(args ...string) string {
		t.Helper()
		out, err := runRoot(t, append(args, url...)...)
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		return out
	}
	run("agent", "start", "conversation", "--id", "demo/c1")
	run("agent", "start", "conversation", "--id", "demo/old")
	run("conv", "send", "demo/c1", "hello")
	run("conv", "send", "demo/old", "hello")
	run("agent", "stop", "demo/old")
	before := run("log", "show", "conversation/demo/old")
	if out, err := runRoot(t, append([]string{"conv", "send", "demo/old", "again"}, url...)...); err == nil || !strings.Contains(err.Error(), "stopped") {
		t.Errorf("conv send to a stopped conversation: %v\n%s", err, out)
	}
	if out, err := runRoot(t, append([]string{"conv", "fork", "demo/c1", "--at", "4", "--as", "demo/old"}, url...)...); err == nil || !strings.Contains(err.Error(), "conflict") {
		t.Errorf("conv fork onto a stopped conversation: %v\n%s", err, out)
	}
	if after := run("log", "show", "conversation/demo/old"); after != before {
		t.Errorf("the stopped conversation's stream changed:\n%s\nnow:\n%s", before, after)
	}
	if _, err := runRoot(t, append([]string{"agent", "state", "demo/old"}, url...)...); err == nil {
		t.Error("the stopped conversation's agent runs again")
	}
}
