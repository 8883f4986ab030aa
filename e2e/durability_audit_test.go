package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// selectedContext writes a NATS CLI configuration whose selected context
// (as 'nats context select' leaves it) names url, and returns the
// environment that makes a command use it: the user's default node,
// reached without taking 127.0.0.1:4222 from whatever listens there.
func selectedContext(t *testing.T, url string) []string {
	t.Helper()
	cfg := t.TempDir()
	ctxDir := filepath.Join(cfg, "nats", "context")
	if err := os.MkdirAll(ctxDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ctxDir, "dflt.json"), []byte(`{"url":"`+url+`"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfg, "nats", "context.txt"), []byte("dflt"), 0o600); err != nil {
		t.Fatal(err)
	}
	return []string{"XDG_CONFIG_HOME=" + cfg}
}

// TestDurabilityAuditDataDirBeatsTheDefaultNode: with a node answering
// at the default address, `--data-dir DIR` reads DIR — `log verify` of a
// directory that does not exist is not_found (it printed "ok" after
// checking the node's log), `log streams` lists DIR's streams — while a
// command naming neither reads the node and says so, and one naming both
// is refused.
func TestDurabilityAuditDataDirBeatsTheDefaultNode(t *testing.T) {
	theirs := StartNode(t, tools, t.TempDir())
	runCLI(t, []string{"NATS_URL=" + theirs.URL}, "agent", "start", "counter", "--id", "theirs").must(t, "agent start theirs")
	mineDir := t.TempDir()
	mine := StartNode(t, tools, mineDir)
	runCLI(t, []string{"NATS_URL=" + mine.URL}, "agent", "start", "counter", "--id", "mine").must(t, "agent start mine")
	if err := mine.Stop(t); err != nil {
		t.Fatal(err)
	}
	dflt := selectedContext(t, theirs.URL)

	missing := filepath.Join(t.TempDir(), "nonexistent")
	r := runCLI(t, dflt, "log", "verify", "--data-dir", missing)
	if r.code != 3 || !strings.Contains(r.stderr, "no event log in "+missing) || strings.Contains(r.stdout, "ok") {
		t.Errorf("log verify --data-dir %s with a default node up: exit %d\nstdout %s\nstderr %s\nwant exit 3, no event log", missing, r.code, r.stdout, r.stderr)
	}
	out := runCLI(t, dflt, "log", "streams", "--data-dir", mineDir, "-o", "json").must(t, "log streams --data-dir")
	if !strings.Contains(out, `"agent/mine"`) || strings.Contains(out, "agent/theirs") {
		t.Errorf("log streams --data-dir %s listed another log:\n%s", mineDir, out)
	}
	if r := runCLI(t, dflt, "conv", "ls", "--data-dir", mineDir, "-o", "json"); r.code != 0 || r.stderr != "" {
		t.Errorf("conv ls --data-dir: exit %d, stderr %q", r.code, r.stderr)
	}

	r = runCLI(t, dflt, "log", "streams", "-o", "json")
	if r.code != 0 || !strings.Contains(r.stdout, `"agent/theirs"`) {
		t.Fatalf("log streams naming neither: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if want := "reading the node at " + theirs.URL + " (context dflt)"; !strings.Contains(r.stderr, want) {
		t.Errorf("log streams naming neither does not say what it read: stderr %q, want %q", r.stderr, want)
	}

	r = runCLI(t, []string{"NATS_URL=" + theirs.URL}, "log", "streams", "--data-dir", mineDir)
	if r.code != 1 || !strings.Contains(r.stderr, "both say what to read") || !strings.Contains(r.stderr, "NATS_URL") || r.stdout != "" {
		t.Errorf("log streams with NATS_URL and --data-dir: exit %d\nstdout %s\nstderr %s\nwant a refusal", r.code, r.stdout, r.stderr)
	}
}

// TestDurabilityAuditConvStartBoundsMaxSteps: conv start through the
// NATS API with max_steps 100,000,000 is refused naming the bound, and no
// conversation is started.
func TestDurabilityAuditConvStartBoundsMaxSteps(t *testing.T) {
	node := StartNode(t, tools, t.TempDir())
	env := []string{"NATS_URL=" + node.URL}
	runCLI(t, env, "project", "open", t.TempDir(), "--id", "p1").must(t, "project open")
	r := reply(t, node.NATS(t, "req", "--raw", "jido.api.project.conv.start", `{"project":"p1","conversation":"c1","limits":{"max_steps":100000000}}`))
	e, _ := r["error"].(map[string]any)
	msg, _ := e["message"].(string)
	if r["ok"] != false || errorType(r) != "invalid_request" || !strings.Contains(msg, "give 1 to 1000") {
		t.Fatalf("conv start with max_steps 100000000: %v, want invalid_request naming the bound", r)
	}
	if out := runCLI(t, env, "agent", "list", "-o", "json").must(t, "agent list"); strings.Contains(out, "p1/c1") {
		t.Fatalf("the refused conversation was started:\n%s", out)
	}
}
