package e2e

import (
	"strconv"
	"strings"
	"testing"

	"github.com/jido-bus/jido-bus/internal/testkit"
)

func state(t *testing.T, m map[string]any) map[string]any {
	t.Helper()
	s, ok := m["state"].(map[string]any)
	if !ok {
		t.Fatalf("reply has no state: %v", m)
	}
	return s
}

// TestCounterThroughNATSCLI is the user's first session: start a counter
// over the control plane, increment it with `nats req`, watch
// counter.changed with `nats sub`, kill -9 the node, start it again on the
// same data directory and find the counter where it was.
func TestCounterThroughNATSCLI(t *testing.T) {
	dataDir := t.TempDir()
	node := StartNode(t, tools, dataDir)

	started := reply(t, node.NATS(t, "req", "--raw", "jido.api.agent.start", `{"type":"counter","id":"c1"}`))
	if started["ok"] != true || started["id"] != "c1" || started["status"] != "running" {
		t.Fatalf("start = %v", started)
	}
	dup := reply(t, node.NATS(t, "req", "--raw", "jido.api.agent.start", `{"type":"counter","id":"c1"}`))
	if dup["ok"] != false || errorType(dup) != "already_exists" {
		t.Fatalf("duplicate start = %v", dup)
	}
	if r := reply(t, node.NATS(t, "req", "--raw", "jido.api.agent.start", `{"type":"nosuch"}`)); errorType(r) != "unknown_type" {
		t.Fatalf("unknown type = %v", r)
	}

	emits, emitsDone := node.StartNATS(t, "sub", "jido.emit.c1.counter.changed", "--count", "3")
	testkit.Eventually(t, "the emit subscription", func() bool { return strings.Contains(emits.String(), "Subscribing") })

	for i, by := range []int{2, 3, 5} {
		r := reply(t, node.NATS(t, "req", "--raw", "jido.agent.c1.counter.increment", `{"by":`+strconv.Itoa(by)+`}`))
		want := []float64{2, 5, 10}[i]
		if r["ok"] != true || state(t, r)["count"] != want || r["version"] != float64(i+1) {
			t.Fatalf("increment %d = %v, want count %v", i, r, want)
		}
	}
	if err := emitsDone(); err != nil {
		t.Fatalf("nats sub: %v\n%s", err, emits.String())
	}
	for _, c := range []string{`{"count":2}`, `{"count":5}`, `{"count":10}`} {
		if !strings.Contains(emits.String(), c) {
			t.Fatalf("nats sub did not see %s:\n%s", c, emits.String())
		}
	}

	// Bad input: each with a clear error, the node unharmed.
	for _, c := range []struct{ subject, body, want string }{
		{"jido.agent.nosuch.counter.increment", `{}`, "not_found"},
		{"jido.agent.c1.counter.increment", `{"by":"two"}`, ""},
		{"jido.agent.c1.counter.explode", `{}`, "no_route"},
	} {
		r := reply(t, node.NATS(t, "req", "--raw", c.subject, c.body))
		if r["ok"] != false || (c.want != "" && errorType(r) != c.want) {
			t.Fatalf("%s %s = %v, want an error %s", c.subject, c.body, r, c.want)
		}
	}

	node.Kill(t)
	node = StartNode(t, tools, dataDir)
	st := reply(t, node.NATS(t, "req", "--raw", "jido.api.agent.state", `{"id":"c1"}`))
	if st["ok"] != true || state(t, st)["count"] != 10.0 || st["status"] != "running" {
		t.Fatalf("after kill -9: %v", st)
	}
	r := reply(t, node.NATS(t, "req", "--raw", "jido.agent.c1.counter.increment", `{"by":1}`))
	if state(t, r)["count"] != 11.0 {
		t.Fatalf("increment after restart = %v", r)
	}
	if err := node.Stop(t); err != nil {
		t.Fatalf("stop: %v", err)
	}
}

// TestCalculatorThroughNATSCLI drives the agent assembled from the
// calculator and stats skills the same way.
func TestCalculatorThroughNATSCLI(t *testing.T) {
	dataDir := t.TempDir()
	node := StartNode(t, tools, dataDir)
	if r := reply(t, node.NATS(t, "req", "--raw", "jido.api.agent.start", `{"type":"calculator","id":"calc"}`)); r["ok"] != true {
		t.Fatalf("start = %v", r)
	}
	for _, c := range []struct{ op, body string }{
		{"add", `{"a":1,"b":2}`}, {"multiply", `{"a":3,"b":4}`}, {"divide", `{"a":10,"b":4}`},
	} {
		if r := reply(t, node.NATS(t, "req", "--raw", "jido.agent.calc.calculator."+c.op, c.body)); r["ok"] != true {
			t.Fatalf("%s = %v", c.op, r)
		}
	}
	if r := reply(t, node.NATS(t, "req", "--raw", "jido.agent.calc.calculator.divide", `{"a":1,"b":0}`)); errorType(r) != "division_by_zero" {
		t.Fatalf("divide by zero = %v", r)
	}
	check := func(when string) {
		st := state(t, reply(t, node.NATS(t, "req", "--raw", "jido.api.agent.state", `{"id":"calc"}`)))
		calc, _ := st["calculator"].(map[string]any)
		stats, _ := st["stats"].(map[string]any)
		if calc["last_result"] != 2.5 || stats["count"] != 3.0 || stats["mean"] != 5.83 && stats["mean"] != (3.0+12+2.5)/3 {
			t.Fatalf("%s: state = %v", when, st)
		}
	}
	check("before the crash")
	node.Kill(t)
	node = StartNode(t, tools, dataDir)
	check("after kill -9")
	if err := node.Stop(t); err != nil {
		t.Fatalf("stop: %v", err)
	}
}
