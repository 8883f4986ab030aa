package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/jido-bus/jido-bus/agents/runtime"
	"github.com/jido-bus/jido-bus/node"
)

// TestAgentListPages: `agent list` pages through every agent by default,
// stops at --limit with a cursor that --after continues from, and refuses
// a cursor the node never gave.
func TestAgentListPages(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	n, err := node.Start(context.Background(), node.Config{DataDir: t.TempDir(), NATS: node.NATSConfig{Listen: "127.0.0.1:0"}, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Shutdown(context.Background())
	const total = 7
	for i := range total {
		if _, err := n.Runtime().Start(context.Background(), runtime.StartRequest{Type: "counter", ID: fmt.Sprintf("c%d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	url := []string{"--nats-url", n.URL()}
	list := func(args ...string) (ids []string, next string) {
		t.Helper()
		out, err := runRoot(t, append(append([]string{"agent", "list", "--json"}, args...), url...)...)
		if err != nil {
			t.Fatalf("agent list %v: %v\n%s", args, err, out)
		}
		var r struct {
			Agents []runtime.Info `json:"agents"`
			Next   string         `json:"next"`
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("agent list %v: %v\n%s", args, err, out)
		}
		for _, a := range r.Agents {
			ids = append(ids, a.ID)
		}
		return ids, r.Next
	}
	if ids, next := list("--page-size", "2"); len(ids) != total || next != "" {
		t.Fatalf("in pages of 2: %v, next %q", ids, next)
	}
	first, next := list("--limit", "3", "--page-size", "2")
	if strings.Join(first, ",") != "c0,c1,c2" || next == "" {
		t.Fatalf("--limit 3: %v, next %q", first, next)
	}
	if rest, next := list("--after", next); strings.Join(rest, ",") != "c3,c4,c5,c6" || next != "" {
		t.Fatalf("--after: %v, next %q", rest, next)
	}
	if out, err := runRoot(t, append([]string{"agent", "list", "--after", "bogus!"}, url...)...); err == nil || !strings.Contains(err.Error(), "cursor") {
		t.Fatalf("--after bogus!: %v\n%s", err, out)
	}
	out, err := runRoot(t, append([]string{"agent", "list", "--limit", "2"}, url...)...)
	if err != nil || strings.Count(out, "counter") != 2 || !strings.Contains(out, "continue with --after") {
		t.Fatalf("table with --limit 2: %v\n%s", err, out)
	}
}
