package main

import (
	"context"
	"encoding/json"
	"net"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/conversation"
	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/jido-bus/jido-bus/internal/testkit"
	"github.com/jido-bus/jido-bus/node"
)

// appendEvents appends n events to stream through the node's log.
func appendEvents(t *testing.T, n *node.Node, stream string, n0, count int) {
	t.Helper()
	for i := n0; i < n0+count; i++ {
		s, err := bus.NewSignal("user.created", "test", map[string]int{"i": i})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := n.Log().Append(context.Background(), stream, eventlog.AnyVersion, s); err != nil {
			t.Fatal(err)
		}
	}
}

// seqsOf returns the seq of each JSON line of out, in order.
func seqsOf(t *testing.T, out string) []uint64 {
	t.Helper()
	var seqs []uint64
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line == "" {
			continue
		}
		var e struct {
			Seq uint64 `json:"seq"`
		}
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		seqs = append(seqs, e.Seq)
	}
	return seqs
}

// TestLogTailFollowsAcrossARestart: log tail -f through a node keeps
// following when the node stops and starts again on the same data dir and
// port, says so on stderr, and prints every entry exactly once.
func TestLogTailFollowsAcrossARestart(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	dir := t.TempDir()
	start := func(listen string) *node.Node {
		n, err := node.Start(context.Background(), node.Config{DataDir: dir, NATS: node.NATSConfig{Listen: listen}, NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	n := start("127.0.0.1:0")
	appendEvents(t, n, "agent/f", 1, 3)
	host := strings.TrimPrefix(n.URL(), "nats://")
	if _, _, err := net.SplitHostPort(host); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	var out, errOut testkit.Buffer
	done := make(chan error, 1)
	go func() {
		root := newRootCmd()
		root.SetOut(&out)
		root.SetErr(&errOut)
		root.SetIn(strings.NewReader(""))
		root.SetArgs([]string{"log", "tail", "agent/f", "-f", "-o", "json", "--poll", "20ms", "--timeout", "1s",
			"--nats-url", n.URL()})
		done <- root.ExecuteContext(ctx)
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("log tail -f: %v\n%s", err, errOut.String())
		}
	}()
	testkit.Eventually(t, "the first entries", func() bool { return len(seqsOf(t, out.String())) == 3 })
	appendEvents(t, n, "agent/f", 4, 2)
	testkit.Eventually(t, "entries 4 and 5", func() bool { return len(seqsOf(t, out.String())) == 5 })

	if err := n.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, "word of the lost connection", func() bool { return strings.Contains(errOut.String(), "reconnecting") })
	n = start(host)
	defer n.Shutdown(context.Background())
	appendEvents(t, n, "agent/f", 6, 3)
	testkit.Eventually(t, "entries 6 to 8", func() bool { return len(seqsOf(t, out.String())) >= 8 })
	if !strings.Contains(errOut.String(), "reconnected") {
		t.Errorf("stderr does not say it reconnected:\n%s", errOut.String())
	}
	appendEvents(t, n, "agent/f", 9, 1)
	testkit.Eventually(t, "entry 9", func() bool { return len(seqsOf(t, out.String())) >= 9 })
	seqs := seqsOf(t, out.String())
	for i, s := range seqs {
		if s != uint64(i+1) {
			t.Fatalf("seqs printed %v: want 1 to 9, each once", seqs)
		}
	}
}

// TestConvFollowUpdatesToolCallsAndEndsDeltas: conv follow prints a tool
// call's line again when it completes, with its outcome, and ends the
// streamed assistant text with a newline before the next item.
func TestConvFollowUpdatesToolCallsAndEndsDeltas(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	n, err := node.Start(context.Background(), node.Config{DataDir: t.TempDir(), NATS: node.NATSConfig{Listen: "127.0.0.1:0"}, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Shutdown(context.Background())
	stream := conversation.Stream("p1/c1")
	appendConv := func(events ...bus.Signal) {
		t.Helper()
		if _, err := n.Log().Append(context.Background(), stream, eventlog.AnyVersion, events...); err != nil {
			t.Fatal(err)
		}
	}
	appendConv(
		convEvent(t, conversation.Started, "e1", `{"project_id":"p1","conversation_id":"c1"}`),
		convEvent(t, conversation.UserMessage, "e2", `{"text":"list the files"}`),
		convEvent(t, conversation.ToolRequested, "e3", `{"call_id":"t1","name":"ls","args":{"dir":"."}}`),
	)

	ctx, cancel := context.WithCancel(context.Background())
	var out, errOut testkit.Buffer
	done := make(chan error, 1)
	go func() {
		root := newRootCmd()
		root.SetOut(&out)
		root.SetErr(&errOut)
		root.SetArgs([]string{"conv", "follow", "p1/c1", "--every", "20ms", "--nats-url", n.URL()})
		done <- root.ExecuteContext(ctx)
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("conv follow: %v\n%s", err, errOut.String())
		}
	}()
	testkit.Eventually(t, "the requested tool call", func() bool { return strings.Contains(out.String(), "ls {\"dir\":\".\"} [requested]") })
	appendConv(convEvent(t, conversation.ToolCompleted, "e4", `{"call_id":"t1","output":"a.go b.go"}`))
	testkit.Eventually(t, "the completed tool call", func() bool { return strings.Contains(out.String(), `[completed] -> "a.go b.go"`) })

	subjects, err := bus.NewSubjects(bus.DefaultPrefix)
	if err != nil {
		t.Fatal(err)
	}
	subject := subjects.Emit("p1/c1", conversation.AssistantDelta)
	for _, text := range []string{"two ", "files"} {
		if err := n.Conn().Publish(subject, []byte(`{"text":"`+text+`"}`)); err != nil {
			t.Fatal(err)
		}
	}
	testkit.Eventually(t, "the deltas", func() bool { return strings.HasSuffix(out.String(), "two files") })
	appendConv(convEvent(t, conversation.AssistantMessage, "e5", `{"text":"two files"}`))
	testkit.Eventually(t, "the assistant's message", func() bool { return strings.Count(out.String(), "two files") == 2 })
	if !strings.Contains(out.String(), "two files\n") || strings.Contains(out.String(), "two files   ") {
		t.Errorf("the streamed text does not end with a newline:\n%s", out.String())
	}
}
