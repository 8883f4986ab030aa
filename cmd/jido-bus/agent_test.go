package main

import (
	"context"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/jido-bus/jido-bus/node"
)

func TestAgentCommands(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	n, err := node.Start(context.Background(), node.Config{DataDir: t.TempDir(), NATS: node.NATSConfig{Listen: "127.0.0.1:0"}, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Shutdown(context.Background())
	url := []string{"--nats-url", n.URL()}
	steps := []struct {
		args []string
		want string
	}{
		{[]string{"agent", "start", "counter", "--id", "c1", "--initial", `{"count":10}`}, `"count":10`},
		{[]string{"agent", "call", "c1", "counter.increment", `{"by":5}`}, `"count":15`},
		{[]string{"agent", "cast", "c1", "counter.increment"}, "sent signal "},
		{[]string{"agent", "cast", "c1", "counter.increment", "-o", "json"}, `{"id":"`},
		{[]string{"agent", "state", "c1"}, "STATUS:"},
		{[]string{"agent", "state", "c1", "-o", "json"}, `"status":"running"`},
		{[]string{"agent", "call", "c1", "counter.increment", "--json"}, `"version":`},
		{[]string{"agent", "list"}, "c1"},
		{[]string{"agent", "stop", "c1", "--reason", "done"}, "stopped c1"},
	}
	for _, s := range steps {
		out, err := runRoot(t, append(s.args, url...)...)
		if err != nil || !strings.Contains(out, s.want) {
			t.Fatalf("%v: %v\n%s", s.args, err, out)
		}
	}
	if _, err := runRoot(t, append([]string{"agent", "call", "c1", "counter.increment"}, url...)...); err == nil || !strings.Contains(err.Error(), "not_found") {
		t.Fatalf("call to a stopped agent: %v", err)
	}
	if _, err := runRoot(t, append([]string{"agent", "start", "counter", "--initial", "{nope"}, url...)...); err == nil || !strings.Contains(err.Error(), "not valid JSON") {
		t.Fatalf("bad --initial: %v", err)
	}
}
