package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/jido-bus/jido-bus/agents/runtime"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/jido-bus/jido-bus/node"
)

// startTestNode starts a node on dir.
func startTestNode(t *testing.T, dir string) *node.Node {
	t.Helper()
	n, err := node.Start(context.Background(), node.Config{DataDir: dir, NATS: node.NATSConfig{Listen: "127.0.0.1:0"}, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func mustStream(t *testing.T, n *node.Node, stream string) eventlog.StreamInfo {
	t.Helper()
	info, err := n.Log().Stream(stream)
	if err != nil {
		t.Fatal(err)
	}
	return info
}

func increment(t *testing.T, n *node.Node, id string, times int) {
	t.Helper()
	for range times {
		sig, err := bus.NewSignal("counter.increment", "test", map[string]int{"by": 1})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := n.Runtime().Call(context.Background(), id, sig); err != nil {
			t.Fatal(err)
		}
	}
}

// TestLogTruncateKeepsAgents: truncating an agent's stream never loses
// the agent. On a data dir with no node, a cut past its snapshot is
// refused with what to do; through a running node the agent is
// snapshotted first and comes back after a restart with its state;
// runtime/agents is never truncated; --dry-run changes nothing.
func TestLogTruncateKeepsAgents(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	dir := t.TempDir()
	n := startTestNode(t, dir)
	if _, err := n.Runtime().Start(context.Background(), runtime.StartRequest{Type: "counter", ID: "c1"}); err != nil {
		t.Fatal(err)
	}
	increment(t, n, "c1", 3) // seq 1 started, then a signal and its cmd record each
	if err := n.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	offline := []string{"--data-dir", dir}

	// Offline, no snapshot covers the cut: refused, nothing removed.
	_, _, err := runLog(t, "", append([]string{"truncate", "agent/c1", "--before", "2"}, offline...)...)
	if err == nil || !strings.Contains(err.Error(), "start the node and truncate through it") || !strings.Contains(err.Error(), "cut at or before seq 1") {
		t.Fatalf("offline truncate of an agent without a snapshot: %v", err)
	}
	for _, stream := range []string{"runtime/agents"} {
		_, _, err := runLog(t, "", append([]string{"truncate", stream, "--before", "2"}, offline...)...)
		if err == nil || !strings.Contains(err.Error(), "every agent would be lost") {
			t.Fatalf("offline truncate of %s: %v", stream, err)
		}
	}
	// Mistakes an operator makes: a stream that does not exist, --before 0.
	if _, _, err := runLog(t, "", append([]string{"truncate", "agent/nosuch", "--before", "2"}, offline...)...); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("truncate of a missing stream: %v", err)
	}
	if _, _, err := runLog(t, "", append([]string{"truncate", "agent/c1", "--before", "0"}, offline...)...); err == nil || !strings.Contains(err.Error(), "1 or more") {
		t.Fatalf("--before 0: %v", err)
	}

	n = startTestNode(t, dir)
	online := []string{"--nats-url", n.URL()}
	// A dry run through the node: what would go, nothing changes.
	out, _, err := runLog(t, "", append([]string{"truncate", "agent/c1", "--before", "5", "--dry-run"}, online...)...)
	if err != nil || !strings.Contains(out, "would remove 4 entries, seq 1-4, ") {
		t.Fatalf("dry run: %v\n%s", err, out)
	}
	if info, _ := n.Log().Stream("agent/c1"); info.First != 1 {
		t.Fatalf("a dry run removed entries: %+v", info)
	}
	if _, _, err := runLog(t, "", append([]string{"truncate", "runtime/agents", "--before", "2"}, online...)...); err == nil || !strings.Contains(err.Error(), "every agent would be lost") {
		t.Fatalf("online truncate of runtime/agents: %v", err)
	}
	// Through the node, past the head: the agent is snapshotted first.
	// The head may still move meanwhile: the outcomes of the last call's
	// emit are recorded up to 100 ms after it.
	before := mustStream(t, n, "agent/c1").Head
	out, _, err = runLog(t, "", append([]string{"truncate", "agent/c1", "--before", "100", "--yes"}, online...)...)
	var head, to uint64
	if _, serr := fmt.Sscanf(strings.TrimPrefix(out, "agent/c1: "), "removed %d entries, seq 1-%d", &head, &to); err != nil || serr != nil || head != to || head < before {
		t.Fatalf("online truncate: %v\n%s, want every entry of the %d or more gone", err, out, before)
	}
	increment(t, n, "c1", 1)
	snap, err := n.Log().LoadSnapshot("agent/c1")
	if err != nil || snap.Version != head {
		t.Fatalf("snapshot after an online truncate: at %d, %v; want at %d", snap.Version, err, head)
	}
	if err := n.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}

	// Offline again: the snapshot covers up to head, one more signal
	// came after it.
	cut := strconv.FormatUint(head+1, 10)
	out, _, err = runLog(t, "", append([]string{"truncate", "agent/c1", "--before", cut, "--yes"}, offline...)...)
	if err != nil || !strings.Contains(out, "nothing below seq "+cut) {
		t.Fatalf("offline truncate within the snapshot: %v\n%s", err, out)
	}
	_, _, err = runLog(t, "", append([]string{"truncate", "agent/c1", "--before", strconv.FormatUint(head+2, 10)}, offline...)...)
	if err == nil || !strings.Contains(err.Error(), "cut at or before seq "+cut) {
		t.Fatalf("offline truncate past the snapshot: %v", err)
	}

	n = startTestNode(t, dir)
	defer n.Shutdown(context.Background())
	info, err := n.Runtime().State("c1")
	if err != nil || !strings.Contains(string(info.State), `"count":4`) || info.Version != 4 {
		t.Fatalf("c1 after truncation and restart: %+v %v", info, err)
	}
	increment(t, n, "c1", 1)
	if info, _ := n.Runtime().State("c1"); !strings.Contains(string(info.State), `"count":5`) {
		t.Fatalf("c1 does not go on: %s", info.State)
	}
	if _, err := n.Runtime().Start(context.Background(), runtime.StartRequest{Type: "counter", ID: "c1"}); bus.ErrorType(err) != runtime.ReasonAlreadyExists {
		t.Fatalf("c1 is running, yet its id could be taken again: %v", err)
	}
}
