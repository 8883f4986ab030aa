package e2e

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/jido-bus/jido-bus/internal/testkit"
)

// runErr runs the CLI expecting it to fail; it returns the exit code and
// standard error.
func runErr(t *testing.T, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(tools.JidoBus, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("jido-bus %s: %v, want a failure", strings.Join(args, " "), err)
	}
	return ee.ExitCode(), stderr.String()
}

// TestProjectRootDeletedWhileOpen: the folder of an open project is
// deleted. The project is listed error with the reason, a tool call is
// refused saying what to do and is an entry of the project's log, close
// still works, and the node goes on serving other projects.
func TestProjectRootDeletedWhileOpen(t *testing.T) {
	node := StartNode(t, tools, t.TempDir())
	on := []string{"--nats-url", node.URL}
	run := func(args ...string) string { return tools.Run(t, append(args, on...)...) }

	proj, other := t.TempDir()+"/proj", t.TempDir()
	writeProjectTree(t, proj, map[string]string{"a.txt": "hello\n"})
	writeProjectTree(t, other, map[string]string{"b.txt": "still here\n"})
	run("project", "open", proj, "--id", "gone")
	run("project", "open", other, "--id", "ok")
	if err := os.RemoveAll(proj); err != nil {
		t.Fatal(err)
	}

	var ls struct {
		Projects []struct {
			ID, Status string
			Error      *struct{ Type, Message string }
		}
	}
	if err := json.Unmarshal([]byte(run("project", "ls", "-o", "json")), &ls); err != nil {
		t.Fatal(err)
	}
	for _, p := range ls.Projects {
		switch {
		case p.ID == "gone" && (p.Status != "error" || p.Error == nil || !strings.Contains(p.Error.Message, "is gone")):
			t.Errorf("the deleted project is listed %+v, want error saying its root is gone", p)
		case p.ID == "ok" && p.Status != "open":
			t.Errorf("the other project is listed %+v", p)
		}
	}
	if table := run("project", "ls"); !strings.Contains(table, "error") {
		t.Errorf("project ls does not show the error:\n%s", table)
	}

	code, stderr := runErr(t, append([]string{"project", "call", "gone", "read_file", `{"path":"a.txt"}`}, on...)...)
	for _, want := range []string{"unavailable", "is gone", "project close gone"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("the refused call (exit %d) does not say %q: %s", code, want, stderr)
		}
	}
	// The refusal is in the project's audit trail, with the reason.
	out := run("log", "show", "project/gone", "--type", "project.tool.failed", "-o", "json")
	if !strings.Contains(out, `"tool":"read_file"`) || !strings.Contains(out, "is gone") {
		t.Errorf("the refused call is not a project.tool.failed entry of project/gone:\n%s", out)
	}
	if out := run("project", "call", "ok", "read_file", `{"path":"b.txt"}`); !strings.Contains(out, "still here") {
		t.Errorf("the other project's call: %q", out)
	}

	if out := run("project", "close", "gone"); !strings.Contains(out, "closed gone") {
		t.Errorf("close: %q", out)
	}
	if out := run("log", "show", "project/gone", "--type", "project.stopped", "-o", "json"); !strings.Contains(out, "project.stopped") {
		t.Errorf("the close is not in the log:\n%s", out)
	}
	if table := run("project", "ls"); strings.Contains(table, "gone") || !strings.Contains(table, "ok") {
		t.Errorf("after close, project ls:\n%s", table)
	}
}

// TestConvSendStartsAProjectConversation: `conv send <project>/<conv>` to
// a new conversation of an open project starts it as the project's child
// (conv.ls lists it), and the user's message is in its stream.
func TestConvSendStartsAProjectConversation(t *testing.T) {
	node := StartNode(t, tools, t.TempDir())
	on := []string{"--nats-url", node.URL}
	run := func(args ...string) string { return tools.Run(t, append(args, on...)...) }
	proj := t.TempDir()
	writeProjectTree(t, proj, map[string]string{"main.go": "package main\n"})
	run("project", "open", proj, "--id", "web")

	if out := run("conv", "send", "web/c7", "what does main.go do?"); !strings.Contains(out, "sent ") {
		t.Fatalf("conv send: %q", out)
	}
	var convs struct {
		OK            bool
		Conversations []struct{ Conv string }
	}
	// conv.ls reads the status read model, which follows the log.
	testkit.Eventually(t, "conv.ls to list web/c7", func() bool {
		if err := json.Unmarshal([]byte(node.NATS(t, "req", "jido.api.conv.ls", `{"project":"web"}`)), &convs); err != nil {
			t.Fatal(err)
		}
		return len(convs.Conversations) > 0
	})
	if !convs.OK || len(convs.Conversations) != 1 || convs.Conversations[0].Conv != "web/c7" {
		t.Fatalf("conv.ls: %+v", convs)
	}
	out := run("log", "show", "conversation/web/c7", "--type", "conversation.user.message", "-o", "json")
	if !strings.Contains(out, `"text":"what does main.go do?"`) {
		t.Errorf("the user message is not in conversation/web/c7:\n%s", out)
	}
	if out := run("log", "show", "project/web", "--type", "project.conv.started", "-o", "json"); !strings.Contains(out, "c7") {
		t.Errorf("the project's log does not show the conversation started:\n%s", out)
	}

	// Closing the project stops its conversation (on_parent_death).
	run("project", "close", "web")
	testkit.Eventually(t, "the conversation to stop with its project", func() bool {
		return strings.Contains(run("log", "show", "conversation/web/c7", "--type", "jido.agent.stopped", "-o", "json"), "jido.agent.stopped")
	})
}

// TestRunCommandCannotChangeJidoOrGit: through the real binary (its
// hidden sandbox-exec helper), a command writes the project but not .git
// or .jido. Skipped where the node reports no user namespaces.
func TestRunCommandCannotChangeJidoOrGit(t *testing.T) {
	node := StartNode(t, tools, t.TempDir())
	on := []string{"--nats-url", node.URL}
	run := func(args ...string) string { return tools.Run(t, append(args, on...)...) }
	proj, outside := t.TempDir(), t.TempDir()
	writeProjectTree(t, proj, map[string]string{".git/config": "[core]\n", ".jido/commands/hello.md": "Hello\n"})
	writeProjectTree(t, outside, map[string]string{"policy.yaml": "commands:\n  programs: [sh]\n"})
	out := run("project", "open", proj, "--id", "cmd", "--policy", outside+"/policy.yaml")
	if !strings.Contains(out, ".jido and .git read-only to commands") {
		t.Skipf("the node cannot keep .jido and .git read-only to commands here:\n%s", out)
	}
	out = run("project", "call", "cmd", "run_command",
		`{"argv":["sh","-c","echo evil >> .git/config; echo evil > .jido/commands/evil.md; mv .git g; echo ok > made.txt"]}`, "-o", "json")
	for _, want := range []string{"Read-only file system", "Device or resource busy"} {
		if !strings.Contains(out, want) {
			t.Errorf("run_command's output does not show %q:\n%s", want, out)
		}
	}
	if b, err := os.ReadFile(proj + "/.git/config"); err != nil || string(b) != "[core]\n" {
		t.Errorf(".git/config is %q (%v)", b, err)
	}
	if _, err := os.Stat(proj + "/.jido/commands/evil.md"); err == nil {
		t.Errorf("the command planted a command in .jido")
	}
	if b, err := os.ReadFile(proj + "/made.txt"); err != nil || string(b) != "ok\n" {
		t.Errorf("the write elsewhere in the root: %q %v", b, err)
	}
}
