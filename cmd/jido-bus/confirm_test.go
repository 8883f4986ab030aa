package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/jido-bus/jido-bus/agents"
	"github.com/jido-bus/jido-bus/agents/runtime"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/internal/testkit"
	"github.com/jido-bus/jido-bus/node"
)

func TestAskYesNo(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want bool
	}{
		{"y\n", true}, {"YES\n", true}, {" yes \n", true}, {"y", true},
		{"\n", false}, {"n\n", false}, {"", false}, {"yep\n", false}, {"no\nyes\n", false},
	} {
		var w bytes.Buffer
		got, err := askYesNo(strings.NewReader(tc.in), &w, "remove 3 entries")
		if err != nil || got != tc.want || w.String() != "remove 3 entries? [y/N] " {
			t.Errorf("answer %q: %v, %v, prompt %q", tc.in, got, err, w.String())
		}
	}
}

// TestLogTruncateWantsYes: without a terminal to ask on, truncate is
// refused unless --yes is given, and nothing is removed; --dry-run needs
// no --yes.
func TestLogTruncateWantsYes(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	dir := makeLog(t)
	local := []string{"--data-dir", dir}
	_, _, err := runLog(t, "y\n", append([]string{"truncate", "agent/a", "--before", "3"}, local...)...)
	if err == nil || !strings.Contains(err.Error(), "pass --yes") || !strings.Contains(err.Error(), "agent/a") {
		t.Fatalf("truncate without --yes on a pipe: %v", err)
	}
	if out, _, err := runLog(t, "", append([]string{"show", "agent/a", "--from", "1"}, local...)...); err != nil || !strings.Contains(out, "a1") {
		t.Fatalf("a refused truncate removed entries: %v\n%s", err, out)
	}
	out, _, err := runLog(t, "", append([]string{"truncate", "agent/a", "--before", "3", "--dry-run"}, local...)...)
	if err != nil || !strings.Contains(out, "would remove 2") {
		t.Fatalf("--dry-run without --yes: %v\n%s", err, out)
	}
	out, _, err = runLog(t, "", append([]string{"truncate", "agent/a", "--before", "3", "--yes"}, local...)...)
	if err != nil || !strings.Contains(out, "removed 2") {
		t.Fatalf("truncate --yes: %v\n%s", err, out)
	}
}

// parentType is an agent type that spawns a counter child per "spawn"
// signal, tagged by its data.
func parentType(t *testing.T) *agents.Definition {
	t.Helper()
	def, err := agents.Define(agents.Spec{
		Name: "parent",
		Actions: []agents.Action{{
			Name: "spawn",
			Run: agents.Typed(func(_ agents.Env, p struct{ Tag string }) (agents.Result, error) {
				return agents.Result{Directives: []agents.Directive{agents.SpawnAgent{Type: "counter", Tag: p.Tag}}}, nil
			}),
		}},
		Routes: []agents.Route{{Pattern: "parent.spawn", Action: "spawn"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return def
}

// TestAgentStopOfAParent: stopping an agent with children shows what
// would stop with --dry-run, is refused without --yes off a terminal, and
// stops with --yes; an agent without children stops without asking.
func TestAgentStopOfAParent(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	def := parentType(t)
	n, err := node.Start(context.Background(), node.Config{
		DataDir: t.TempDir(), NATS: node.NATSConfig{Listen: "127.0.0.1:0"}, NoSync: true,
		Types: func(r *agents.Registry) error { return r.Register(def) },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Shutdown(context.Background())
	rt := n.Runtime()
	if _, err := rt.Start(context.Background(), runtime.StartRequest{Type: "parent", ID: "p"}); err != nil {
		t.Fatal(err)
	}
	for _, tag := range []string{"k1", "k2"} {
		sig, _ := bus.NewSignal("parent.spawn", "test", map[string]string{"tag": tag})
		if _, err := rt.Call(context.Background(), "p", sig); err != nil {
			t.Fatal(err)
		}
	}
	waitChildren := func() {
		testkit.EventuallyNil(t, "p's two children", func() error {
			if info, err := rt.State("p"); err != nil || len(info.Children) != 2 {
				return fmt.Errorf("p's children: %+v %v", info.Children, err)
			}
			return nil
		})
	}
	waitChildren()
	url := []string{"--nats-url", n.URL()}

	out, err := runRoot(t, append([]string{"agent", "stop", "p", "--dry-run"}, url...)...)
	if err != nil || !strings.Contains(out, "would stop p") || !strings.Contains(out, "p/k1") || !strings.Contains(out, "p/k2") {
		t.Fatalf("agent stop --dry-run: %v\n%s", err, out)
	}
	out, err = runRoot(t, append([]string{"agent", "stop", "p"}, url...)...)
	if err == nil || !strings.Contains(err.Error(), "pass --yes") || !strings.Contains(err.Error(), "2 children") {
		t.Fatalf("agent stop of a parent without --yes: %v\n%s", err, out)
	}
	if _, err := rt.State("p"); err != nil {
		t.Fatalf("a refused stop stopped p: %v", err)
	}
	// A leaf stops without a question.
	if out, err := runRoot(t, append([]string{"agent", "stop", "p/k1"}, url...)...); err != nil || !strings.Contains(out, "stopped p/k1") {
		t.Fatalf("agent stop of a child: %v\n%s", err, out)
	}
	if out, err := runRoot(t, append([]string{"agent", "stop", "p", "--yes"}, url...)...); err != nil || !strings.Contains(out, "stopped p") {
		t.Fatalf("agent stop --yes: %v\n%s", err, out)
	}
}
