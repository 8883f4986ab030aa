package e2e

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jido-bus/jido-bus/internal/testkit"
)

// writeProjectTree writes files (slash path → content) under dir.
func writeProjectTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestProjects drives a project through the real binary and the NATS
// CLI: open a folder holding every kind of asset, list and call tools, a
// symlink escape refused and logged, an edited command reloaded with its
// diff on jido.emit.<id>.project.assets.reloaded, and the project back
// with its assets after kill -9 and a restart on the same data dir.
func TestProjects(t *testing.T) {
	dataDir := t.TempDir()
	node := StartNode(t, tools, dataDir)
	on := func() []string { return []string{"--nats-url", node.URL} }
	run := func(args ...string) string { return tools.Run(t, append(args, on()...)...) }

	proj := t.TempDir()
	outside := t.TempDir()
	writeProjectTree(t, outside, map[string]string{"secret.txt": "TOP SECRET\n"})
	writeProjectTree(t, proj, map[string]string{
		"main.go":                      "package main\n\nfunc main() { println(\"hi\") }\n",
		".jido/skills/review/SKILL.md": "---\nname: review\ndescription: Review a change.\n---\nRead the diff.\n",
		".jido/commands/hello.md":      "---\ndescription: Say hello.\n---\nHello $ARGUMENTS\n",
		".jido/workflows/show.md": "---\nname: show\ndescription: Show a file.\ninputs:\n  path: {type: string}\n---\n\n" +
			"```yaml\nsteps:\n  - id: r\n    tool: read_file\n    args: {path: \"{{inputs.path}}\"}\n```\n",
		".jido/skill_graph/index.md":   "# Index\n[[testing]]\n",
		".jido/skill_graph/testing.md": "# Testing\nRun go test.\n",
	})
	if err := os.Symlink(outside, filepath.Join(proj, "escape")); err != nil {
		t.Fatal(err)
	}

	// Tools that run programs (run_command, workflows) are listed once
	// the policy names programs.
	policyFile := filepath.Join(outside, "policy.yaml")
	writeProjectTree(t, outside, map[string]string{"policy.yaml": "commands:\n  programs: [echo]\n"})

	out := run("project", "open", proj, "--id", "p1", "--policy", policyFile, "-o", "json")
	var info struct {
		ID, Status string
		Counts     struct{ Skills, Commands, Workflows, Notes int }
	}
	if err := json.Unmarshal([]byte(out), &info); err != nil || info.ID != "p1" || info.Status != "open" ||
		info.Counts.Skills != 1 || info.Counts.Commands != 1 || info.Counts.Workflows != 1 || info.Counts.Notes != 2 {
		t.Fatalf("project open: %v\n%s", err, out)
	}
	// The lifecycle signal names: the open is project.started on
	// the project's stream.
	if out = run("log", "show", "project/p1", "--type", "project.started", "-o", "json"); !strings.Contains(out, `"root"`) {
		t.Errorf("the open is not a project.started in the log:\n%s", out)
	}
	out = run("project", "tools", "p1")
	for _, want := range []string{"read_file", "edit_file", "grep", "command_hello", "skill_review", "workflow_show"} {
		if !strings.Contains(out, want) {
			t.Errorf("project tools lists no %s:\n%s", want, out)
		}
	}

	if out = run("project", "call", "p1", "read_file", `{"path":"main.go"}`); !strings.HasPrefix(out, "package main\n") {
		t.Errorf("read_file printed %q", out)
	}
	run("project", "call", "p1", "edit_file", `{"path":"main.go","old_string":"hi","new_string":"hello"}`)
	if b, _ := os.ReadFile(filepath.Join(proj, "main.go")); !strings.Contains(string(b), `println("hello")`) {
		t.Errorf("edit_file did not edit main.go:\n%s", b)
	}
	if out = run("project", "call", "p1", "grep", `{"pattern":"hello"}`); !strings.Contains(out, "main.go") {
		t.Errorf("grep found nothing:\n%s", out)
	}
	if out = run("project", "call", "p1", "command_hello", `{"arguments":["world"]}`); !strings.Contains(out, "Hello world") {
		t.Errorf("command_hello:\n%s", out)
	}

	if out = run("project", "call", "p1", "workflow_show", `{"path":"main.go"}`); !strings.Contains(out, "package main") {
		t.Errorf("workflow_show:\n%s", out)
	}

	// A path through a symlink out of the root is refused, exit 5, and
	// logged on the project's stream.
	stdout, stderr, err := tryRun(append([]string{"project", "call", "p1", "read_file", `{"path":"escape/secret.txt"}`}, on()...)...)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 5 || !strings.Contains(stderr, "outside_root") || strings.Contains(stdout, "TOP SECRET") {
		t.Fatalf("symlink escape: %v\nstdout %s\nstderr %s", err, stdout, stderr)
	}
	if out = run("log", "show", "project/p1", "--type", "project.tool.failed", "-o", "json"); !strings.Contains(out, "outside_root") {
		t.Errorf("the refusal is not in the log:\n%s", out)
	}

	// Editing a command is reloaded by the watcher and emitted with the diff.
	sub, wait := node.StartNATS(t, "sub", "jido.emit.p1.project.assets.reloaded", "--count", "1")
	testkit.Eventually(t, "nats sub subscribed", func() bool { return strings.Contains(sub.String(), "Subscribing on") })
	writeProjectTree(t, proj, map[string]string{".jido/commands/hello.md": "---\ndescription: Say hello loudly.\n---\nHELLO $ARGUMENTS\n"})
	if err := wait(); err != nil {
		t.Fatalf("no project.assets.reloaded: %v\n%s", err, sub.String())
	}
	if !strings.Contains(sub.String(), `"changed":["hello"]`) {
		t.Errorf("the reload does not name the changed command:\n%s", sub.String())
	}
	if out = run("log", "show", "project/p1", "--type", "project.assets.reloaded"); !strings.Contains(out, "project.assets.reloaded") {
		t.Errorf("the reload is not in the log:\n%s", out)
	}

	// kill -9, restart on the same data dir: the project is back.
	node.Kill(t)
	node = StartNode(t, tools, dataDir)
	out = run("project", "get", "p1", "-o", "json")
	info.Status = ""
	if err := json.Unmarshal([]byte(out), &info); err != nil || info.Status != "open" || info.Counts.Commands != 1 || info.Counts.Notes != 2 {
		t.Fatalf("project get after kill -9: %v\n%s", err, out)
	}
	if out = run("project", "call", "p1", "command_hello", `{"arguments":["again"]}`); !strings.Contains(out, "HELLO again") {
		t.Errorf("command_hello after restart:\n%s", out)
	}
	if out = run("log", "show", "project/p1", "--type", "project.started", "-o", "json"); strings.Count(out, `"restart":true`) != 1 {
		t.Errorf("the restart is not one project.started with restart true:\n%s", out)
	}
}
