package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLogLayoutUpgradeThroughTheBinary opens, with this build, the data
// directory a node of the previous log layout left (testdata/node-layout1:
// jido-bus serve at 54c9658, counter agent c1 incremented by 1, 2 and 3).
// The first command to open it upgrades its log in place and says so on
// stderr; log verify and log replay --verify then agree with what that
// build reported (9 entries in each order, state {"count":6} at version 3,
// every decision as recorded); the node serves the agent on from there,
// and nothing is upgraded twice.
func TestLogLayoutUpgradeThroughTheBinary(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	if err := os.CopyFS(dir, os.DirFS(filepath.Join(checkoutRoot, "e2e", "testdata", "node-layout1"))); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, nil, "log", "verify", "--data-dir", dir)
	out := r.must(t, "log verify (upgrading)")
	if !strings.Contains(r.stderr, "upgrading the key layout from 1 to 2") || !strings.Contains(r.stderr, "upgraded the key layout to 2") {
		t.Fatalf("the first open did not say it upgrades the log:\n%s", r.stderr)
	}
	if want := "checked 9 stream entries and 9 global entries\nok\n"; out != want {
		t.Fatalf("log verify after the upgrade:\n%s\nwant:\n%s", out, want)
	}
	r = runCLI(t, nil, "log", "replay", "--verify", "--data-dir", dir, "agent/c1")
	out = r.must(t, "log replay --verify")
	if strings.Contains(r.stderr, "upgrad") {
		t.Fatalf("the log was upgraded twice:\n%s", r.stderr)
	}
	for _, want := range []string{"after seq 8, at version 3", "verified: every decision came out as the log recorded it", `state: {"count":6}`} {
		if !strings.Contains(out, want) {
			t.Fatalf("log replay --verify: no %q in\n%s", want, out)
		}
	}

	node := StartNode(t, tools, dir)
	st := reply(t, node.NATS(t, "req", "--raw", "jido.api.agent.state", `{"id":"c1"}`))
	if got := state(t, st); got["count"] != float64(6) || st["version"] != float64(3) {
		t.Fatalf("agent c1 after the upgrade: %v", st)
	}
	if r := reply(t, node.NATS(t, "req", "--raw", "jido.agent.c1.counter.increment", `{"by":4}`)); r["ok"] != true || r["version"] != float64(4) {
		t.Fatalf("increment after the upgrade: %v", r)
	}
	if err := node.Stop(t); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(node.Logs(), "upgrad") {
		t.Fatalf("the node upgraded the log again:\n%s", node.Logs())
	}
	runCLI(t, nil, "log", "verify", "--data-dir", dir).must(t, "log verify after the node ran")
	out = runCLI(t, nil, "log", "replay", "--verify", "--data-dir", dir, "agent/c1").must(t, "log replay --verify after the node ran")
	if !strings.Contains(out, `state: {"count":10}`) || !strings.Contains(out, "verified") {
		t.Fatalf("log replay --verify after the node ran:\n%s", out)
	}
}
