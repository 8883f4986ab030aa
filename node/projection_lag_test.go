package node

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/agents/runtime"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/internal/testkit"
	"github.com/jido-bus/jido-bus/projections/projectionapi"
)

// TestProjectionLagReachesZeroPastOtherEntries is issue 11 defect 14: the
// conversation projections select conversation events only, and entries
// of other streams appended after the last conversation event left their
// lag above zero for good (projection ls said "catching up", the metric
// jido_projection_lag_entries stayed up).
func TestProjectionLagReachesZeroPastOtherEntries(t *testing.T) {
	n := startNode(t, t.TempDir())
	defer n.Shutdown(context.Background())
	ctx := context.Background()
	nc, err := nats.Connect(n.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	startOutsideDriven(t, n, "demo/c1")
	msg, err := nc.Request(n.subjects.API("conv", "send"), []byte(`{"conv":"demo/c1","text":"hello"}`), 10*time.Second)
	if err != nil || !strings.Contains(string(msg.Data), `"ok":true`) {
		t.Fatalf("conv send: %v %v", msg, err)
	}
	// Then only entries the conversation projections do not select.
	if _, err := n.Runtime().Start(ctx, runtime.StartRequest{Type: "counter", ID: "c1"}); err != nil {
		t.Fatal(err)
	}
	for range 5 {
		sig, err := bus.NewSignal("counter.increment", "test", map[string]int{"by": 1})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := n.Runtime().Call(ctx, "c1", sig); err != nil {
			t.Fatal(err)
		}
	}

	client := projectionapi.Client{NC: nc, Subjects: n.subjects}
	testkit.EventuallyNil(t, "projection lag 0", func() error {
		ls, err := client.List(ctx, projectionapi.ListRequest{})
		if err != nil {
			t.Fatal(err)
		}
		body := metricsBody(t, n)
		done := len(ls.Projections) > 0
		for _, p := range ls.Projections {
			if p.Lag != 0 || p.Position != p.Head || p.Head < n.Log().Durable() ||
				!strings.Contains(body, fmt.Sprintf("jido_projection_lag_entries{projection=%q} 0\n", p.Name)) {
				done = false
			}
		}
		if !done {
			return fmt.Errorf("\n%+v\n%s", ls.Projections, lagLines(body))
		}
		return nil
	})
}

func metricsBody(t *testing.T, n *Node) string {
	t.Helper()
	resp, err := http.Get("http://" + n.metrics.ln.Addr().String() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(body)
}

func lagLines(body string) string {
	var out []string
	for line := range strings.SplitSeq(body, "\n") {
		if strings.HasPrefix(line, "jido_projection_lag_entries{") {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}
