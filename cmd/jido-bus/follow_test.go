package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/jido-bus/jido-bus/node"
)

// lockedBuffer is a bytes.Buffer a command may write while the test reads.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

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

// waitFor polls cond until it holds or 20s pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
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
	var out, errOut lockedBuffer
	done := make(chan error, 1)
	go func() {
		root := newRootCmd()
		root.SetOut(&out)
		root.SetErr(&errOut)
		root.SetIn(strings.NewReader(""))
		root.SetArgs([]string{"log", "tail", "agent/f", "-f", "-o", "json", "--poll", "20ms", "--timeout", "1s",
			"--nats-url", n.URL(), "--data-dir", t.TempDir()})
		done <- root.ExecuteContext(ctx)
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("log tail -f: %v\n%s", err, errOut.String())
		}
	}()
	waitFor(t, "the first entries", func() bool { return len(seqsOf(t, out.String())) == 3 })
	appendEvents(t, n, "agent/f", 4, 2)
	waitFor(t, "entries 4 and 5", func() bool { return len(seqsOf(t, out.String())) == 5 })

	if err := n.Close(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "word of the lost connection", func() bool { return strings.Contains(errOut.String(), "reconnecting") })
	n = start(host)
	defer n.Close(5 * time.Second)
	appendEvents(t, n, "agent/f", 6, 3)
	waitFor(t, "entries 6 to 8", func() bool { return len(seqsOf(t, out.String())) >= 8 })
	if !strings.Contains(errOut.String(), "reconnected") {
		t.Errorf("stderr does not say it reconnected:\n%s", errOut.String())
	}
	appendEvents(t, n, "agent/f", 9, 1)
	waitFor(t, "entry 9", func() bool { return len(seqsOf(t, out.String())) >= 9 })
	seqs := seqsOf(t, out.String())
	for i, s := range seqs {
		if s != uint64(i+1) {
			t.Fatalf("seqs printed %v: want 1 to 9, each once", seqs)
		}
	}
}
