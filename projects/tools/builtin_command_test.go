package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jido-bus/jido-bus/internal/testkit"
	"github.com/jido-bus/jido-bus/projects/policy"
)

// commandPolicy lists echo, cat and sh; without_landlock: warn lets the
// tests run on a kernel without Landlock (policy's own tests cover the
// confinement).
func commandPolicy(t *testing.T, extra string) *policy.Policy {
	t.Helper()
	p, err := policy.Load("test", []byte("commands:\n  programs: [echo, cat, sh]\n  without_landlock: warn\n"+extra))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRunCommandRuns(t *testing.T) {
	f := newFixture(t, map[string]string{"sub/in.txt": "from a file\n"}, commandPolicy(t, ""), Options{})
	var out runCommandOutput
	f.ok(t, "run_command", map[string]any{"argv": []string{"echo", "hello", "world"}}, &out)
	t.Logf("confinement: %s; warning: %q", policy.Protection(), out.Warning)
	if out.ExitCode != 0 || out.Stdout != "hello world\n" || out.Stderr != "" || out.Truncated {
		t.Fatalf("echo: %+v", out)
	}
	f.ok(t, "run_command", map[string]any{"argv": []string{"cat", "in.txt"}, "cwd": "sub"}, &out)
	if out.Stdout != "from a file\n" {
		t.Fatalf("cat in sub: %+v", out)
	}
	// A failing program is an output, with its exit code and stderr.
	f.ok(t, "run_command", map[string]any{"argv": []string{"sh", "-c", "echo bad >&2; exit 3"}}, &out)
	if out.ExitCode != 3 || out.Stderr != "bad\n" {
		t.Fatalf("exit 3: %+v", out)
	}
	// It writes inside the root.
	f.ok(t, "run_command", map[string]any{"argv": []string{"sh", "-c", "echo made > made.txt"}}, &out)
	if b, err := os.ReadFile(filepath.Join(f.dir, "made.txt")); err != nil || string(b) != "made\n" {
		t.Fatalf("made.txt: %q %v", b, err)
	}
	if got := f.obs.got(); got[len(got)-1] != "completed run_command" {
		t.Fatalf("observer: %v", got)
	}
}

func TestRunCommandListedOnlyWithPrograms(t *testing.T) {
	cat, err := NewCatalog(Builtins(Limits{})...)
	if err != nil {
		t.Fatal(err)
	}
	listed := func(p *policy.Policy) bool {
		for _, s := range cat.List(p) {
			if s.Name == "run_command" {
				return true
			}
		}
		return false
	}
	if listed(policy.Default()) {
		t.Error("run_command is offered under a policy that lists no program")
	}
	if !listed(commandPolicy(t, "")) {
		t.Error("run_command is not offered under a policy listing programs")
	}
}

func TestRunCommandRefusals(t *testing.T) {
	outside := t.TempDir()
	f := newFixture(t, map[string]string{"a.txt": "x"}, commandPolicy(t, ""), Options{})
	os.Symlink(outside, filepath.Join(f.dir, "out"))
	f.fail(t, "run_command", map[string]any{"argv": []string{"ls"}}, ReasonDenied)
	f.fail(t, "run_command", map[string]any{"argv": []string{"bash", "-c", "id"}}, ReasonDenied)
	f.fail(t, "run_command", map[string]any{"argv": []string{"./echo"}}, ReasonDenied)
	f.fail(t, "run_command", map[string]any{"argv": []string{"echo"}, "cwd": ".."}, ReasonOutsideRoot)
	f.fail(t, "run_command", map[string]any{"argv": []string{"echo"}, "cwd": outside}, ReasonOutsideRoot)
	f.fail(t, "run_command", map[string]any{"argv": []string{"echo"}, "cwd": "out"}, ReasonOutsideRoot)
	f.fail(t, "run_command", map[string]any{"argv": []string{"echo"}, "cwd": "nowhere"}, "not_found")
	f.fail(t, "run_command", map[string]any{"argv": []string{"echo"}, "cwd": "a.txt"}, "invalid_request")
	f.fail(t, "run_command", map[string]any{"argv": []string{"echo hi"}}, "invalid_request")
	f.fail(t, "run_command", map[string]any{"argv": []string{}}, ReasonInvalidArgs)
	f.fail(t, "run_command", map[string]any{"argv": "echo hi"}, ReasonInvalidArgs)
	f.fail(t, "run_command", map[string]any{"argv": []string{"echo"}, "timeout": "soon"}, ReasonInvalidArgs)
	f.fail(t, "run_command", map[string]any{"argv": []string{"echo"}, "timeout": "0s"}, ReasonInvalidArgs)
	f.fail(t, "run_command", map[string]any{"argv": []string{"echo"}, "timeout": "11m"}, ReasonInvalidArgs)

	// The default policy lists no program; a policy denying the tool
	// refuses it before anything is looked up.
	d := newFixture(t, nil, nil, Options{})
	d.fail(t, "run_command", map[string]any{"argv": []string{"echo"}}, ReasonDenied)
	n := newFixture(t, nil, commandPolicy(t, "tools:\n  run_command: deny\n  \"*\": allow\n"), Options{})
	n.fail(t, "run_command", map[string]any{"argv": []string{"echo"}}, ReasonDenied)
	// PATH not passed: the program cannot be found.
	np := newFixture(t, nil, commandPolicy(t, "  env: [LANG]\n"), Options{})
	np.fail(t, "run_command", map[string]any{"argv": []string{"echo"}}, "not_found")
}

func TestRunCommandTimeoutKills(t *testing.T) {
	f := newFixture(t, nil, commandPolicy(t, ""), Options{})
	// The child sleeps with an argument no other process has; everything
	// the command started is killed at the timeout, the child with it.
	arg := fmt.Sprintf("60.%d", os.Getpid())
	e := f.fail(t, "run_command", map[string]any{"argv": []string{"sh", "-c", "echo started; sleep " + arg + " & wait"}, "timeout": "2s"}, ReasonTimeout)
	if !strings.Contains(e.Message, "2s") {
		t.Errorf("message %q does not name the timeout", e.Message)
	}
	out, ok := e.Details.(runCommandOutput)
	if !ok || out.Stdout != "started\n" {
		t.Errorf("details %#v: want the output so far", e.Details)
	}
	// Without a PID namespace (a node allowed weaker confinement) SIGKILL
	// is sent when the call returns and the child may still be on its
	// way out for a moment; wait for it.
	testkit.Eventually(t, "the command's child `sleep "+arg+"` to end with the timeout", func() bool {
		files, _ := filepath.Glob("/proc/[0-9]*/cmdline")
		for _, p := range files {
			if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), "sleep\x00"+arg+"\x00") {
				if st, _ := os.ReadFile(filepath.Join(filepath.Dir(p), "stat")); !strings.Contains(string(st), ") Z ") {
					return false
				}
			}
		}
		return true
	})
}

// A limit of the policy ends the call as limit_exceeded, naming it, with
// the output so far in the details.
func TestRunCommandLimitExceeded(t *testing.T) {
	if c := policy.Protection(); !c.Namespaces {
		t.Skipf("the limits are watched in the command's own namespaces, which this system does not give (%s)", c)
	}
	f := newFixture(t, nil, commandPolicy(t, "  limits: {cpu_seconds: 1}\n"), Options{})
	e := f.fail(t, "run_command", map[string]any{"argv": []string{"sh", "-c", "echo before; while :; do :; done"}, "timeout": "60s"}, ReasonLimitExceeded)
	if !strings.Contains(e.Message, "commands.limits.cpu_seconds") {
		t.Errorf("message %q does not name the limit", e.Message)
	}
	if out, ok := e.Details.(runCommandOutput); !ok || out.Stdout != "before\n" {
		t.Errorf("details %#v: want the output so far", e.Details)
	}
	// The next call runs.
	var out runCommandOutput
	f.ok(t, "run_command", map[string]any{"argv": []string{"echo", "next"}}, &out)
	if out.Stdout != "next\n" {
		t.Errorf("the next call: %+v", out)
	}
}

func TestRunCommandCallerCancel(t *testing.T) {
	f := newFixture(t, nil, commandPolicy(t, ""), Options{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := f.runner.Run(ctx, ToolCall{Name: "run_command", Args: json.RawMessage(`{"argv":["sh","-c","echo > started; sleep 60"]}`)})
		done <- err
	}()
	// Cancel once the command runs, so the kill path is the one tested.
	testkit.Eventually(t, "the command to run", func() bool {
		if len(done) == 1 {
			t.Fatalf("run_command ended before it was cancelled: %v", <-done)
		}
		_, err := os.Stat(filepath.Join(f.dir, "started"))
		return err == nil
	})
	cancel()
	err := <-done
	if !errors.Is(err, &Error{Type: ReasonCancelled}) {
		t.Fatalf("cancelled run_command: %v", err)
	}
}

func TestRunCommandOutputCaps(t *testing.T) {
	f := newFixture(t, nil, commandPolicy(t, ""), Options{})
	var out runCommandOutput
	// 100 KB on stdout: its tail is kept inline, marked truncated.
	f.ok(t, "run_command", map[string]any{"argv": []string{"sh", "-c", "i=0; while [ $i -lt 2000 ]; do echo line-$i-padding-padding-padding-padding; i=$((i+1)); done; echo END >&2"}}, &out)
	if !out.Truncated || !strings.HasSuffix(out.Stdout, "line-1999-padding-padding-padding-padding\n") || out.Stderr != "END\n" || len(out.Stdout)+len(out.Stderr) > 48<<10 {
		t.Fatalf("truncated output: truncated=%v stdout %d bytes ending %q, stderr %q", out.Truncated, len(out.Stdout), out.Stdout[max(0, len(out.Stdout)-50):], out.Stderr)
	}
	// Past MaxCommandOutput the command is killed: too_large.
	small := newFixtureLimits(t, commandPolicy(t, ""), Limits{MaxCommandOutput: 1000})
	small.fail(t, "run_command", map[string]any{"argv": []string{"sh", "-c", "while :; do echo yyyyyyyyyyyyyyyyyyyyyyyy; done"}}, "too_large")
}

// newFixtureLimits is newFixture with the built-ins built under l.
func newFixtureLimits(t *testing.T, p *policy.Policy, l Limits) *fixture {
	t.Helper()
	f := newFixture(t, nil, p, Options{})
	cat, err := NewCatalog(Builtins(l)...)
	if err != nil {
		t.Fatal(err)
	}
	f.runner.SetCatalog(cat)
	return f
}
