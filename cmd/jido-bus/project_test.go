package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

// writeTree writes files (slash path → content) under dir.
func writeTree(t *testing.T, dir string, files map[string]string) {
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

func TestProjectCommands(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	n := startNode(t, t.TempDir())
	defer n.Shutdown(context.Background())
	url := []string{"--nats-url", n.URL()}
	run := func(args ...string) (string, error) { return runRoot(t, append(args, url...)...) }

	parent := t.TempDir()
	writeTree(t, parent, map[string]string{
		"proj/main.go":                      "package main\n",
		"proj/.jido/skills/review/SKILL.md": "---\nname: review\ndescription: Review a change.\n---\nRead the diff.\n",
		"proj/.jido/commands/hello.md":      "---\ndescription: Say hello.\n---\nHello $ARGUMENTS\n",
		"policy.yaml":                       "tools:\n  \"*\": allow\n  write_file: deny\n",
		"bad-policy.yaml":                   "tools:\n  \"*\": maybe\n",
	})
	// PATH is the CLI's: relative to its working directory.
	t.Chdir(parent)

	out, err := run("project", "open", "proj", "--id", "p1", "--policy", "policy.yaml")
	real, _ := filepath.EvalSymlinks(filepath.Join(parent, "proj"))
	if err != nil || !strings.Contains(out, "p1") || !strings.Contains(out, real) {
		t.Fatalf("open: %v\n%s", err, out)
	}
	steps := []struct {
		args []string
		want string
	}{
		{[]string{"project", "ls"}, "p1"},
		{[]string{"project", "get", "p1"}, "request"},
		{[]string{"project", "get", "p1", "-o", "json"}, `"policy_source":"request"`},
		{[]string{"project", "tools", "p1"}, "read_file"},
		{[]string{"project", "assets", "p1"}, "review"},
		{[]string{"project", "assets", "p1", "--kind", "command"}, "hello"},
		{[]string{"project", "assets", "p1", "--kind", "skill", "--name", "review", "-o", "json"}, `"name":"review"`},
		{[]string{"project", "diagnostics", "p1"}, ""},
		{[]string{"project", "reload", "p1"}, "p1"},
		{[]string{"project", "call", "p1", "read_file", `{"path":"main.go"}`}, "package main\n"},
		{[]string{"project", "call", "p1", "command_hello", `{"arguments":["you"]}`}, "Hello you"},
		{[]string{"project", "call", "p1", "read_file", `{"path":"main.go"}`, "-o", "json"}, `"call_id":"`},
	}
	for _, s := range steps {
		out, err := run(s.args...)
		if err != nil || !strings.Contains(out, s.want) {
			t.Fatalf("%v: %v\n%s", s.args, err, out)
		}
	}
	// read_file's text is printed as is, not as JSON.
	if out, _ := run("project", "call", "p1", "read_file", `{"path":"main.go"}`); out != "package main\n" {
		t.Errorf("call read_file printed %q, want the file's text", out)
	}
	// Lists have the list shape.
	out, err = run("project", "ls", "--json")
	if err != nil {
		t.Fatal(err)
	}
	if items, _ := listShape(t, out, "projects"); len(items) != 1 {
		t.Errorf("ls --json: %s", out)
	}
	out, _ = run("project", "tools", "p1", "--json")
	listShape(t, out, "tools")
	out, _ = run("project", "diagnostics", "p1", "--json")
	listShape(t, out, "diagnostics")

	// Errors: the code a script can act on.
	codes := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"project", "get", "nope"}, exitNotFound, "not_found"},
		{[]string{"project", "call", "p1", "read_file", `{"path":"../../etc/passwd"}`}, exitForbidden, "outside_root"},
		{[]string{"project", "call", "p1", "write_file", `{"path":"x","content":"y"}`}, exitForbidden, "denied"},
		{[]string{"project", "call", "p1", "read_file", `{"path":`}, exitFailed, "not valid JSON"},
		{[]string{"project", "call", "p1", "read_file", `["main.go"]`}, exitFailed, "JSON object"},
		{[]string{"project", "call", "p1", "no_such_tool"}, exitFailed, "unknown_tool"},
		{[]string{"project", "open", "proj", "--id", "p2", "--policy", "bad-policy.yaml"}, exitFailed, "bad-policy.yaml"},
		{[]string{"project", "open", "proj", "--id", "p2", "--policy", "missing.yaml"}, exitFailed, "missing.yaml"},
		{[]string{"project", "assets", "p1", "--kind", "skil"}, exitFailed, "skill"},
		// An empty PATH (an unset variable) must not open the working directory.
		{[]string{"project", "open", "", "--id", "p3"}, exitFailed, "empty"},
	}
	for _, c := range codes {
		out, err := run(c.args...)
		if err == nil || exitCode(err) != c.code || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: exit %d (%v), want %d and %q\n%s", c.args, exitCode(err), err, c.code, c.want, out)
		}
	}
	if _, err := os.Stat(filepath.Join(parent, "proj", "x")); err == nil {
		t.Error("a denied write_file wrote its file")
	}

	out, err = run("project", "close", "p1", "-o", "json")
	var closed struct{ Project string }
	if err != nil || json.Unmarshal([]byte(out), &closed) != nil || closed.Project != "p1" {
		t.Fatalf("close: %v\n%s", err, out)
	}
	if _, err := run("project", "get", "p1"); exitCode(err) != exitNotFound {
		t.Errorf("get after close: %v", err)
	}
}

func TestProjectCommandsHaveOutputJSON(t *testing.T) {
	root := newRootCmd()
	for _, path := range []string{"project open", "project ls", "project get", "project tools", "project assets",
		"project reload", "project close", "project call", "project diagnostics"} {
		c := findCmd(t, root, path)
		if c.Flags().Lookup("output") == nil || c.Flags().Lookup("json") == nil || !strings.Contains(c.Long, "With -o json") {
			t.Errorf("%s: no -o json, or its shape is not in the help", path)
		}
		if c.Flags().Lookup("nats-url") == nil {
			t.Errorf("%s: no connection flags", path)
		}
	}
	if c := findCmd(t, root, "project open"); !strings.Contains(c.Long, "working directory") {
		t.Errorf("project open's help does not say PATH is resolved here:\n%s", c.Long)
	}
	for _, path := range []string{"project get", "project tools", "project call", "project close", "project reload", "project assets", "project diagnostics"} {
		if findCmd(t, root, path).ValidArgsFunction == nil {
			t.Errorf("%s: no completion of project ids", path)
		}
	}
}
