package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// cliResult is one run of the jido-bus CLI.
type cliResult struct {
	stdout, stderr string
	code           int
}

// runCLI runs the jido-bus CLI in an empty working directory (so no ./data
// can stand in for a node) with env added to an environment cleared of
// the NATS CLI's variables and saved contexts.
func runCLI(t *testing.T, env []string, args ...string) cliResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, tools.JidoBus, args...)
	cmd.Dir = t.TempDir()
	home := t.TempDir()
	base := []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "PATH=" + os.Getenv("PATH")}
	cmd.Env = append(base, env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := cliResult{stdout: stdout.String(), stderr: stderr.String()}
	if ee, ok := errors.AsType[*exec.ExitError](err); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("jido-bus %s: %v", strings.Join(args, " "), err)
	}
	return r
}

func (r cliResult) must(t *testing.T, args ...string) string {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("jido-bus %s: exit %d\n%s", strings.Join(args, " "), r.code, r.stderr)
	}
	return r.stdout
}

// TestQuickStartWithNATSURL runs the README's quick start with NATS_URL
// set and no --nats-url or -s anywhere.
func TestQuickStartWithNATSURL(t *testing.T) {
	n := StartNode(t, tools, t.TempDir())
	env := []string{"NATS_URL=" + n.URL}
	run := func(args ...string) string {
		t.Helper()
		return runCLI(t, env, args...).must(t, args...)
	}
	// The NATS CLI reads NATS_URL too: the quick start's requests.
	natsCLI := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(tools.NATS, append([]string{"--timeout", "10s"}, args...)...)
		cmd.Env = append(natsCLIEnv(), "NATS_URL="+n.URL)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("nats %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	natsCLI("req", "jido.api.ping", "")
	natsCLI("req", "jido.api.agent.start", `{"type":"counter","id":"c1"}`)
	natsCLI("req", "jido.agent.c1.counter.increment", `{"by":2}`)
	natsCLI("req", "jido.agent.c1.counter.increment", `{"by":3}`)
	if out := run("agent", "list"); !strings.Contains(out, "c1") {
		t.Errorf("agent list:\n%s", out)
	}
	if out := run("agent", "call", "c1", "counter.increment", `{"by":1}`); !strings.Contains(out, `"count":6`) {
		t.Errorf("agent call:\n%s", out)
	}
	if out := run("log", "show", "agent/c1"); !strings.Contains(out, "counter.increment") {
		t.Errorf("log show:\n%s", out)
	}
	run("log", "replay", "agent/c1", "--verify")
	run("log", "replay", "agent/c1", "--diff", "1", "2")
	run("top", "--once")
}

func TestCLIConnectionErrorsAndExitCodes(t *testing.T) {
	n := StartNode(t, tools, t.TempDir())
	env := []string{"NATS_URL=" + n.URL}
	runCLI(t, env, "agent", "start", "counter", "--id", "c1").must(t, "agent start")

	t.Run("not found is exit 3", func(t *testing.T) {
		r := runCLI(t, env, "agent", "state", "nope")
		if r.code != 3 || !strings.Contains(r.stderr, "not_found") {
			t.Fatalf("exit %d, stderr %q; want 3 and not_found", r.code, r.stderr)
		}
	})
	t.Run("a wrong prefix says so", func(t *testing.T) {
		r := runCLI(t, env, "agent", "state", "c1", "--prefix", "prod")
		if r.code != 4 || !strings.Contains(r.stderr, "one answers under --prefix jido: is --prefix prod a mistake?") {
			t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
		}
	})
	t.Run("no node is exit 4", func(t *testing.T) {
		url := "nats://" + freeAddr(t)
		for _, args := range [][]string{{"agent", "list"}, {"log", "streams"}, {"top", "--once"}} {
			r := runCLI(t, []string{"NATS_URL=" + url}, args...)
			if r.code != 4 || !strings.Contains(r.stderr, "no NATS server at "+url) {
				t.Errorf("%v: exit %d, stderr %q; want 4 and no NATS server", args, r.code, r.stderr)
			}
		}
	})
	t.Run("flag over NATS_URL", func(t *testing.T) {
		r := runCLI(t, []string{"NATS_URL=nats://" + freeAddr(t)}, "agent", "state", "c1", "-s", n.URL)
		r.must(t, "agent state -s")
	})
	t.Run("a saved NATS context", func(t *testing.T) {
		home := t.TempDir()
		dir := filepath.Join(home, "nats", "context")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "local.json"), []byte(`{"url":"`+n.URL+`"}`), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(home, "nats", "context.txt"), []byte("local"), 0o600); err != nil {
			t.Fatal(err)
		}
		runCLI(t, []string{"XDG_CONFIG_HOME=" + home}, "agent", "state", "c1").must(t, "agent state (selected context)")
		r := runCLI(t, []string{"XDG_CONFIG_HOME=" + home}, "agent", "state", "c1", "--context", "other")
		if r.code != 1 || !strings.Contains(r.stderr, `--context "other": no such NATS context`) {
			t.Errorf("--context other: exit %d, stderr %q", r.code, r.stderr)
		}
	})
	t.Run("completion of agent ids", func(t *testing.T) {
		out := runCLI(t, env, "__complete", "agent", "state", "").must(t, "__complete")
		if !strings.Contains(out, "c1\n") {
			t.Errorf("completion:\n%s", out)
		}
		// No node: nothing offered, and no error.
		r := runCLI(t, []string{"NATS_URL=nats://" + freeAddr(t)}, "__complete", "agent", "state", "")
		if r.code != 0 || strings.Contains(r.stdout, "c1") {
			t.Errorf("completion without a node: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		if out := runCLI(t, nil, "completion", "bash").must(t, "completion bash"); !strings.Contains(out, "jido-bus") {
			t.Errorf("completion bash:\n%.200s", out)
		}
	})
}

func TestVersionJSON(t *testing.T) {
	out := runCLI(t, nil, "version", "-o", "json").must(t, "version -o json")
	var v struct {
		Version   string `json:"version"`
		Commit    string `json:"commit"`
		Go        string `json:"go"`
		LogFormat int    `json:"log_format"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("version -o json: %v\n%s", err, out)
	}
	if v.Version == "" || v.Commit == "" || !strings.HasPrefix(v.Go, "go") || v.LogFormat < 1 {
		t.Errorf("version -o json = %+v", v)
	}
}

// freeAddr is a loopback address where nothing listens: a port the kernel
// handed out and that was closed again.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}
