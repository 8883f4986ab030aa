package node

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"
	"go.uber.org/goleak"

	"github.com/jido-bus/jido-bus/agents/runtime"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/jido-bus/jido-bus/internal/testkit"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func startNode(t *testing.T, dir string) *Node {
	t.Helper()
	n, err := Start(context.Background(), Config{DataDir: dir, NATS: NATSConfig{Listen: "127.0.0.1:0"}, MetricsAddr: "127.0.0.1:0", NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestNodeRestartAndMetrics starts a node in process, runs a counter,
// reads the metrics endpoint, restarts on the same data dir and finds the
// counter again.
func TestNodeRestartAndMetrics(t *testing.T) {
	dir := t.TempDir()
	n := startNode(t, dir)
	ctx := context.Background()
	if _, err := n.Runtime().Start(ctx, runtime.StartRequest{Type: "counter", ID: "c1"}); err != nil {
		t.Fatal(err)
	}
	sig, err := bus.NewSignal("counter.increment", "test", map[string]int{"by": 3})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.Runtime().Call(ctx, "c1", sig); err != nil {
		t.Fatal(err)
	}
	if _, err := n.Runtime().Call(ctx, "nosuch", sig); err == nil {
		t.Fatal("a call to an unknown agent succeeded")
	}

	wants := []string{
		`jido_agents_active 1`,
		`jido_commit_seconds_count{agent_type="counter"} 1`,
		`jido_directives_total{kind="emit",outcome="ok"}`, // the emit runs after the call's reply
		`jido_signals_refused_total{reason="not_found"} 1`,
		`jido_projection_lag_entries{projection="timeline"}`,
	}
	testkit.EventuallyNil(t, "every metric", func() error {
		resp, err := http.Get("http://" + n.metrics.ln.Addr().String() + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var missing []string
		for _, want := range wants {
			if !strings.Contains(string(body), want) {
				missing = append(missing, want)
			}
		}
		if len(missing) != 0 {
			return fmt.Errorf("metrics lack %q", missing)
		}
		return nil
	})
	if err := n.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}

	n = startNode(t, dir)
	defer n.Shutdown(context.Background())
	if n.Recovered() != 1 {
		t.Fatalf("recovered %d agents", n.Recovered())
	}
	info, err := n.Runtime().State("c1")
	if err != nil || !strings.Contains(string(info.State), `"count":3`) {
		t.Fatalf("after restart: %+v %v", info, err)
	}
}

// TestDeadLetterFloodIsKept: a flood of bad input is refused message by
// message and every refusal ends up in the log stream dlq.
func TestDeadLetterFloodIsKept(t *testing.T) {
	dir := t.TempDir()
	n := startNode(t, dir)
	nc, err := nats.Connect(n.URL())
	if err != nil {
		t.Fatal(err)
	}
	const bad = 600
	for i := range bad {
		if err := nc.Publish(fmt.Sprintf("jido.agent._bad%d.x", i), []byte(`{}`)); err != nil {
			t.Fatal(err)
		}
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	nc.Close()
	testkit.EventuallyNil(t, fmt.Sprintf("%d dead letters filed", bad), func() error {
		if got := n.bus.Stats().DeadLetters; got < bad {
			return fmt.Errorf("%d filed", got)
		}
		return nil
	})
	if err := n.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	l, err := eventlog.Open(LogDir(dir), eventlog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	info, err := l.Stream(DeadLetterStream)
	if err != nil || info.Count != bad {
		t.Fatalf("dlq stream: %+v %v, want %d entries", info, err, bad)
	}
}

// TestRestartClosesUnfinishedToolCalls: a tool call requested before the
// node went down is closed as interrupted when it comes back.
func TestRestartClosesUnfinishedToolCalls(t *testing.T) {
	dir := t.TempDir()
	n := startNode(t, dir)
	ctx := context.Background()
	startOutsideDriven(t, n, "p1/c1")
	if _, err := n.convSend(ctx, []byte(`{"conv":"p1/c1","text":"run the tests"}`)); err != nil {
		t.Fatal(err)
	}
	req, err := bus.NewSignal("conversation.tool.requested", "assistant", map[string]any{"call_id": "k1", "name": "go_test", "args": map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	req.SetExtension(bus.ExtCausationID, "u1")
	if _, err := n.Runtime().Call(ctx, "p1/c1", req); err != nil {
		t.Fatal(err)
	}
	// p1/c2 has nothing open: the restart leaves its stream as it was.
	startOutsideDriven(t, n, "p1/c2")
	if _, err := n.convSend(ctx, []byte(`{"conv":"p1/c2","text":"hello"}`)); err != nil {
		t.Fatal(err)
	}
	idle, err := n.Log().Stream("conversation/p1/c2")
	if err != nil {
		t.Fatal(err)
	}
	if err := n.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}

	n = startNode(t, dir)
	defer n.Shutdown(context.Background())
	if after, err := n.Log().Stream("conversation/p1/c2"); err != nil || after.Head != idle.Head {
		t.Fatalf("idle conversation after restart: %+v %v, want head %d", after, err, idle.Head)
	}
	var failed []string
	for e, err := range n.Log().ReadStream("conversation/p1/c1", eventlog.ReadOptions{Types: "conversation.tool.failed"}) {
		if err != nil {
			t.Fatal(err)
		}
		failed = append(failed, string(e.Event.Data()))
	}
	if len(failed) != 1 || !strings.Contains(failed[0], `"interrupted"`) || !strings.Contains(failed[0], `"k1"`) {
		t.Fatalf("tool.failed entries after restart: %v", failed)
	}
}
