package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

// selectContext makes name (with url) the NATS context 'nats context
// select' chose: the user's default node.
func selectContext(t *testing.T, natsDir, name, url string) {
	t.Helper()
	writeNATSContext(t, natsDir, name, `{"url":"`+url+`"}`)
	if err := os.WriteFile(filepath.Join(natsDir, "context.txt"), []byte(name), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestDataDirMeansThatDirectory: with a node answering at the default
// address, an explicit --data-dir still reads that directory (a missing
// one is not_found, never the node's log checked instead); a node named
// by a flag or NATS_URL beside --data-dir is refused; with neither, the
// default node is read and the command says so.
func TestDataDirMeansThatDirectory(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	natsDir := isolateNATSEnv(t)
	n := startNode(t, t.TempDir())
	defer n.Shutdown(context.Background())
	if _, err := runRoot(t, "agent", "start", "counter", "--id", "n1", "-s", n.URL()); err != nil {
		t.Fatal(err)
	}
	selectContext(t, natsDir, "here", n.URL())
	dir := makeLog(t)

	out, errOut, err := runLog(t, "", "streams", "--data-dir", dir, "-o", "json")
	if err != nil || !strings.Contains(out, `"agent/a"`) || strings.Contains(out, "agent/n1") || errOut != "" {
		t.Fatalf("streams --data-dir %s: %v\nstdout %s\nstderr %s", dir, err, out, errOut)
	}
	for _, args := range [][]string{{"log", "verify"}, {"log", "streams"}, {"conv", "ls"}, {"projection", "ls"}} {
		missing := filepath.Join(t.TempDir(), "nonexistent")
		out, err := runRoot(t, append(args, "--data-dir", missing)...)
		if err == nil || !strings.Contains(err.Error(), "no event log in "+missing) || exitCode(err) != exitNotFound {
			t.Errorf("%s --data-dir %s: %v (exit %d), want not_found (exit %d)\n%s", strings.Join(args, " "), missing, err, exitCode(err), exitNotFound, out)
		}
	}

	out, errOut, err = runLog(t, "", "streams", "-o", "json")
	if err != nil || !strings.Contains(out, "agent/n1") {
		t.Fatalf("streams with neither: %v\n%s", err, out)
	}
	if want := "reading the node at " + n.URL() + " (context here)"; !strings.Contains(errOut, want) {
		t.Errorf("streams with neither does not say which it read: stderr %q, want %q", errOut, want)
	}

	for _, c := range []struct {
		env  string
		args []string
		says string
	}{
		{n.URL(), nil, "env -u NATS_URL"},
		{"", []string{"-s", n.URL()}, "drop --server"},
		{"", []string{"--nats-url", n.URL()}, "drop --nats-url"},
		{"", []string{"--context", "here"}, "drop --context"},
	} {
		t.Setenv("NATS_URL", c.env)
		for _, cmd := range [][]string{{"log", "streams"}, {"conv", "ls"}} {
			_, err := runRoot(t, append(append(cmd, "--data-dir", dir), c.args...)...)
			if err == nil || !strings.Contains(err.Error(), "both say what to read") || !strings.Contains(err.Error(), c.says) {
				t.Errorf("%v with NATS_URL=%q %v and --data-dir: %v, want a refusal saying %q", cmd, c.env, c.args, err, c.says)
			}
		}
	}
}

// TestNamedNodeIsNoFallback: a node named and unreachable is an error
// (exit 4), not a reason to read the data dir; the default node
// unreachable falls back to the default data dir, and says so.
func TestNamedNodeIsNoFallback(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	natsDir := isolateNATSEnv(t)
	t.Chdir(filepath.Dir(makeLog(t))) // ./data holds a log
	_, _, err := runLog(t, "", "streams", "-s", noNode)
	if err == nil || exitCode(err) != exitUnreachable || strings.Contains(err.Error(), "data") {
		t.Fatalf("streams -s %s: %v (exit %d), want unreachable and no data dir", noNode, err, exitCode(err))
	}
	selectContext(t, natsDir, "away", noNode)
	out, errOut, err := runLog(t, "", "streams", "-o", "json")
	if err != nil || !strings.Contains(out, `"agent/a"`) {
		t.Fatalf("streams with the default node away: %v\n%s", err, out)
	}
	if want := "no node answers at " + noNode + " (context away): reading the data dir ./data"; !strings.Contains(errOut, want) {
		t.Errorf("stderr %q, want %q", errOut, want)
	}
}
