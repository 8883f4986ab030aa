package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jido-bus/jido-bus/eventlog/eventlogtest"
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

// TestLogMigrateBackToLayout1 goes back: the data directory of
// testdata/node-layout1, upgraded and written to by this build's node,
// is migrated to layout 1 with jido-bus log migrate (refused while the
// node runs). Every stream and global entry the old build wrote holds
// its bytes again, the entries this build added hold their value under
// their stream key as layout 1 does, and the layout key says 1; this
// build then upgrades it again and serves the agent on. (Run by hand
// with the build of 54c9658 on such a directory: it recovers the agent
// and verifies the log.)
func TestLogMigrateBackToLayout1(t *testing.T) {
	fixture := filepath.Join(checkoutRoot, "e2e", "testdata", "node-layout1")
	dir := filepath.Join(t.TempDir(), "data")
	if err := os.CopyFS(dir, os.DirFS(fixture)); err != nil {
		t.Fatal(err)
	}
	old := eventlogtest.RawKeys(t, nil, filepath.Join(fixture, "log"))
	node := StartNode(t, tools, dir)
	if r := reply(t, node.NATS(t, "req", "--raw", "jido.agent.c1.counter.increment", `{"by":4}`)); r["ok"] != true || r["version"] != float64(4) {
		t.Fatalf("increment: %v", r)
	}
	r := runCLI(t, nil, "log", "migrate", "--to-layout", "1", "--data-dir", dir)
	if r.code != 1 || !strings.Contains(r.stderr, "in use by a running node: stop it first") {
		t.Fatalf("log migrate beside a running node: exit %d\n%s", r.code, r.stderr)
	}
	if err := node.Stop(t); err != nil {
		t.Fatal(err)
	}

	out := runCLI(t, nil, "log", "migrate", "--to-layout", "1", "--data-dir", dir, "-o", "json").must(t, "log migrate --to-layout 1")
	if want := `{"from":2,"to":1,"converted":12,"damaged":0}` + "\n"; out != want {
		t.Fatalf("log migrate: %s; want %s", out, want)
	}
	now := eventlogtest.RawKeys(t, nil, filepath.Join(dir, "log"))
	if got := now["Lformat"]; got != "\x01" {
		t.Fatalf("layout key %q after the downgrade; want 1", got)
	}
	added := 0
	for k, v := range now {
		if k[0] != 'S' && k[0] != 'G' {
			continue
		}
		if was, ok := old[k]; ok && was != v {
			t.Errorf("key %q: %x after the downgrade, %x as the old build wrote it", k, v, was)
		} else if !ok && k[0] == 'S' {
			added++
			if len(v) <= 8 {
				t.Errorf("key %q added by this build holds %x, not its value", k, v)
			}
		}
	}
	if added != 3 {
		t.Fatalf("%d stream entries added by this build's node; want 3 (the signal, its cmd record, its effects)", added)
	}

	r = runCLI(t, nil, "log", "replay", "--verify", "--data-dir", dir, "agent/c1")
	out = r.must(t, "log replay --verify after going back")
	if !strings.Contains(r.stderr, "upgraded the key layout to 2") || !strings.Contains(out, `state: {"count":10}`) {
		t.Fatalf("after going back, this build's next open upgrades again and reads the same agent:\n%s\n%s", r.stderr, out)
	}
}
