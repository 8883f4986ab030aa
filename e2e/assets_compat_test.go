package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jido-bus/jido-bus/internal/testkit"
)

// projectCLI runs the CLI against node, failing the test on an error.
func projectCLI(t *testing.T, node *Node) func(args ...string) string {
	return func(args ...string) string {
		t.Helper()
		return tools.Run(t, append(args, "--nats-url", node.URL)...)
	}
}

// toolNames lists the tools `project tools` offers for project id.
func toolNames(t *testing.T, run func(...string) string, id string) []string {
	t.Helper()
	var reply struct{ Tools []struct{ Name string } }
	if err := json.Unmarshal([]byte(run("project", "tools", id, "-o", "json")), &reply); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range reply.Tools {
		names = append(names, tl.Name)
	}
	return names
}

// TestPolicyToolsKeyLeavesTheOtherTools: a project whose policy.yaml says
// tools: {run_command: ask} still offers every other tool, as the README
// says keys left out do (it offered none), and run_command asks.
func TestPolicyToolsKeyLeavesTheOtherTools(t *testing.T) {
	node := StartNode(t, tools, t.TempDir())
	run := projectCLI(t, node)
	proj := t.TempDir()
	writeProjectTree(t, proj, map[string]string{
		"a.txt":             "hello\n",
		".jido/policy.yaml": "tools:\n  run_command: ask\ncommands:\n  programs: [cat]\n",
	})
	run("project", "open", proj, "--id", "web")
	names := toolNames(t, run, "web")
	for _, want := range []string{"read_file", "write_file", "edit_file", "grep", "glob", "list_dir", "run_command"} {
		if !slices.Contains(names, want) {
			t.Errorf("project tools does not offer %s: %v", want, names)
		}
	}
	if out := run("project", "call", "web", "read_file", `{"path":"a.txt"}`); !strings.Contains(out, "hello") {
		t.Errorf("read_file: %q", out)
	}
	code, stderr := runErr(t, "project", "call", "web", "run_command", `{"argv":["cat","a.txt"]}`, "--nats-url", node.URL)
	if code != 5 || !strings.Contains(stderr, "approval_required") {
		t.Errorf("run_command under run_command: ask: exit %d, %s", code, stderr)
	}
}

// TestPolicyEditOfAnOpenProject: editing .jido/policy.yaml of an open
// project changes what is allowed, by the watcher alone; the change is in
// the project's stream (project.policy.changed) and log replay --verify
// still re-decides the stream; project reload prints what changed. An
// edit into invalid YAML keeps the last good policy and says so in
// diagnostics, reload and the stream. The project's own tools and
// commands cannot edit the file, nor reach it through a link. An edit
// made while the node is down is followed at the restart.
func TestPolicyEditOfAnOpenProject(t *testing.T) {
	dataDir := t.TempDir()
	node := StartNode(t, tools, dataDir)
	run := projectCLI(t, node)
	proj := t.TempDir()
	policyFile := filepath.Join(proj, ".jido", "policy.yaml")
	setPolicy := func(s string) { writeProjectTree(t, proj, map[string]string{".jido/policy.yaml": s}) }
	writeProjectTree(t, proj, map[string]string{"a.txt": "hello\n"})
	setPolicy("tools:\n  write_file: deny\ncommands:\n  programs: [sh]\n")
	run("project", "open", proj, "--id", "web")
	const write = `{"path":"b.txt","content":"new\n"}`
	if code, stderr := runErr(t, "project", "call", "web", "write_file", write, "--nats-url", node.URL); code != 5 || !strings.Contains(stderr, "denied") {
		t.Fatalf("write_file under write_file: deny: exit %d %s", code, stderr)
	}

	// The watcher follows an edit by itself.
	changed, changedDone := node.StartNATS(t, "sub", "jido.emit.web.project.policy.changed", "--count", "1")
	testkit.Eventually(t, "the policy subscription", func() bool { return strings.Contains(changed.String(), "Subscribing") })
	setPolicy("tools:\n  edit_file: deny\ncommands:\n  programs: [sh]\n")
	if err := changedDone(); err != nil {
		t.Fatalf("no project.policy.changed after the edit: %v", err)
	}
	if !strings.Contains(changed.String(), "tools.write_file: deny -\\u003e (none)") && !strings.Contains(changed.String(), "tools.write_file: deny -> (none)") {
		t.Errorf("project.policy.changed does not list the change:\n%s", changed.String())
	}
	run("project", "call", "web", "write_file", write)
	if code, _ := runErr(t, "project", "call", "web", "edit_file", `{"path":"a.txt","old_string":"hello","new_string":"bye"}`, "--nats-url", node.URL); code != 5 {
		t.Errorf("edit_file after the edit that denies it: exit %d", code)
	}

	// project reload prints what changed. The watcher may follow an
	// edit before the reload does; then the next edit is tried, until a
	// reload is the one that follows it (the watcher waits 200ms).
	printed, prev := false, "(none)"
	for _, mode := range []string{"ask", "deny", "ask", "deny", "ask"} {
		setPolicy("tools:\n  edit_file: deny\n  grep: " + mode + "\ncommands:\n  programs: [sh]\n")
		out := run("project", "reload", "web")
		if strings.Contains(out, "policy: changed, now .jido/policy.yaml") {
			if want := "  ~ tools.grep: " + prev + " -> " + mode; !strings.Contains(out, want) {
				t.Errorf("project reload does not say %q:\n%s", want, out)
			}
			printed = true
			break
		}
		prev = mode
	}
	if !printed {
		t.Error("project reload never printed a policy change (the watcher followed every edit first)")
	}

	// Invalid YAML: the last good policy stays, and everyone is told.
	refused, refusedDone := node.StartNATS(t, "sub", "jido.emit.web.project.policy.refused", "--count", "1")
	testkit.Eventually(t, "the refusal subscription", func() bool { return strings.Contains(refused.String(), "Subscribing") })
	setPolicy("tools: [\n")
	if err := refusedDone(); err != nil {
		t.Fatalf("no project.policy.refused after an invalid edit: %v", err)
	}
	if out := run("project", "reload", "web"); !strings.Contains(out, "policy: the file was not taken; the policy in force (.jido/policy.yaml) stays") {
		t.Errorf("project reload of an invalid policy file:\n%s", out)
	}
	if out := run("project", "diagnostics", "web"); !strings.Contains(out, "policy.yaml") || !strings.Contains(out, "keeps its policy") {
		t.Errorf("project diagnostics does not list the refused policy file:\n%s", out)
	}
	run("project", "call", "web", "write_file", write) // still allowed: the last good policy
	if code, _ := runErr(t, "project", "call", "web", "edit_file", `{"path":"a.txt","old_string":"hello","new_string":"bye"}`, "--nats-url", node.URL); code != 5 {
		t.Errorf("edit_file under the last good policy: exit %d", code)
	}

	// The project's own tools cannot loosen it: .jido is read-only to
	// the file tools, through a link too, and to commands.
	setPolicy("tools:\n  edit_file: deny\ncommands:\n  programs: [sh]\n")
	run("project", "reload", "web")
	before, _ := os.ReadFile(policyFile)
	if err := os.Symlink(".jido/policy.yaml", filepath.Join(proj, "p.yaml")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ tool, args string }{
		{"write_file", `{"path":".jido/policy.yaml","content":"tools: {\"*\": allow}\n"}`},
		{"write_file", `{"path":"p.yaml","content":"tools: {\"*\": allow}\n"}`},
		{"write_file", `{"path":".JIDO/policy.yaml","content":"tools: {\"*\": allow}\n"}`},
	} {
		if code, stderr := runErr(t, "project", "call", "web", c.tool, c.args, "--nats-url", node.URL); code != 5 {
			t.Errorf("%s %s: exit %d, want refused: %s", c.tool, c.args, code, stderr)
		}
	}
	// A command is refused or fails to write; either way the file stays.
	_, _ = exec.Command(tools.JidoBus, "project", "call", "web", "run_command",
		`{"argv":["sh","-c","printf 'tools: {\"*\": allow}\\n' > .jido/policy.yaml; rm -f .jido/policy.yaml"]}`, "--nats-url", node.URL).CombinedOutput()
	if after, err := os.ReadFile(policyFile); err != nil || string(after) != string(before) {
		t.Errorf("the project's tools changed its policy file: %q, %v", after, err)
	}
	if out := run("project", "reload", "web"); strings.Contains(out, "policy: changed") {
		t.Errorf("the policy changed after the tools' attempts:\n%s", out)
	}

	// .jido moved away (a checkout, a clean) is no reason to fall back
	// to the defaults: the policy in force stays, and the stream says so.
	refused, refusedDone = node.StartNATS(t, "sub", "jido.emit.web.project.policy.refused", "--count", "1")
	testkit.Eventually(t, "the refusal subscription", func() bool { return strings.Contains(refused.String(), "Subscribing") })
	if err := os.Rename(filepath.Join(proj, ".jido"), filepath.Join(proj, "jido-away")); err != nil {
		t.Fatal(err)
	}
	if err := refusedDone(); err != nil || !strings.Contains(refused.String(), "data dir") {
		t.Fatalf("no project.policy.refused once .jido was gone: %v\n%s", err, refused.String())
	}
	if code, _ := runErr(t, "project", "call", "web", "edit_file", `{"path":"a.txt","old_string":"hello","new_string":"bye"}`, "--nats-url", node.URL); code != 5 {
		t.Errorf("with .jido gone, edit_file: exit %d (the defaults were taken)", code)
	}
	// Back, it is watched again: the next edit is followed, and the
	// refusal is no longer listed.
	changed, changedDone = node.StartNATS(t, "sub", "jido.emit.web.project.policy.changed", "--count", "1")
	testkit.Eventually(t, "the policy subscription", func() bool { return strings.Contains(changed.String(), "Subscribing") })
	if err := os.Rename(filepath.Join(proj, "jido-away"), filepath.Join(proj, ".jido")); err != nil {
		t.Fatal(err)
	}
	setPolicy("tools:\n  edit_file: deny\n  grep: deny\ncommands:\n  programs: [sh]\n")
	if err := changedDone(); err != nil {
		t.Fatalf("an edit after .jido came back was not followed: %v", err)
	}
	if out := run("project", "diagnostics", "web"); strings.Contains(out, "policy.yaml") {
		t.Errorf("the refusal is still listed once .jido is back:\n%s", out)
	}

	// The stream still re-decides: the policy entries are pure records.
	run("log", "replay", "project/web", "--verify")

	// Edited while the node is down: followed at the restart.
	if err := node.Stop(t); err != nil {
		t.Fatalf("stop: %v", err)
	}
	setPolicy("tools:\n  write_file: deny\n")
	node = StartNode(t, tools, dataDir)
	run = projectCLI(t, node)
	if code, _ := runErr(t, "project", "call", "web", "write_file", write, "--nats-url", node.URL); code != 5 {
		t.Errorf("after a restart, write_file under the file edited while down: exit %d", code)
	}
	if out := run("log", "show", "project/web", "--type", "project.policy.changed", "-o", "json"); !strings.Contains(out, "write_file") {
		t.Errorf("the edit made while down is not in the stream:\n%s", out)
	}
}

// TestPolicyGivenAtOpenWinsOverTheFile: the operator's policy (project
// open --policy FILE) is not overridden by an edit of the repository's
// .jido/policy.yaml; project reload says why the file is not read.
func TestPolicyGivenAtOpenWinsOverTheFile(t *testing.T) {
	node := StartNode(t, tools, t.TempDir())
	run := projectCLI(t, node)
	proj, cfg := t.TempDir(), t.TempDir()
	writeProjectTree(t, proj, map[string]string{"a.txt": "hello\n", ".jido/policy.yaml": "tools:\n  \"*\": allow\n"})
	writeProjectTree(t, cfg, map[string]string{"op.yaml": "tools:\n  write_file: deny\n"})
	run("project", "open", proj, "--id", "web", "--policy", filepath.Join(cfg, "op.yaml"))
	writeProjectTree(t, proj, map[string]string{".jido/policy.yaml": "tools:\n  \"*\": allow\n  write_file: allow\n"})
	if out := run("project", "reload", "web"); !strings.Contains(out, "policy: request: the project was opened with a policy in its request") {
		t.Errorf("project reload:\n%s", out)
	}
	if code, _ := runErr(t, "project", "call", "web", "write_file", `{"path":"b.txt","content":"x"}`, "--nats-url", node.URL); code != 5 {
		t.Errorf("the repository's policy file overrode the operator's: write_file exit %d", code)
	}
}

// TestSymlinkedPolicyFileRefused: a policy file that is a link (here to a
// file of the root, which the file tools may write) is refused at open,
// and while open it is not followed.
func TestSymlinkedPolicyFileRefused(t *testing.T) {
	node := StartNode(t, tools, t.TempDir())
	run := projectCLI(t, node)
	proj := t.TempDir()
	writeProjectTree(t, proj, map[string]string{"shared.yaml": "tools:\n  \"*\": allow\n", ".jido/commands/x.md": "x"})
	link := filepath.Join(proj, ".jido", "policy.yaml")
	if err := os.Symlink("../shared.yaml", link); err != nil {
		t.Fatal(err)
	}
	if code, stderr := runErr(t, "project", "open", proj, "--id", "web", "--nats-url", node.URL); code == 0 || !strings.Contains(stderr, "symlink") {
		t.Fatalf("open with a symlinked policy file: exit %d %s", code, stderr)
	}
	os.Remove(link)
	writeProjectTree(t, proj, map[string]string{".jido/policy.yaml": "tools:\n  write_file: deny\n"})
	run("project", "open", proj, "--id", "web")
	os.Remove(link)
	if err := os.Symlink("../shared.yaml", link); err != nil {
		t.Fatal(err)
	}
	if out := run("project", "reload", "web"); !strings.Contains(out, "symlink") {
		t.Errorf("project reload with the policy file made a link:\n%s", out)
	}
	if code, _ := runErr(t, "project", "call", "web", "write_file", `{"path":"b.txt","content":"x"}`, "--nats-url", node.URL); code != 5 {
		t.Errorf("the linked file was followed: write_file exit %d", code)
	}
}

// compatFixtures are commands and skills written for Claude Code and the
// Agent Skills format (SOURCES.md in it says where each comes from),
// under the checkout (checkoutRoot: the suite leaves it before the tests
// run).
func compatFixtures(t *testing.T) string {
	t.Helper()
	if checkoutRootErr != nil {
		t.Fatal(checkoutRootErr)
	}
	return filepath.Join(checkoutRoot, "projects", "assets", "testdata", "compat")
}

// copyInto copies the fixture folder src to dst.
func copyInto(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		writeProjectTree(t, dst, map[string]string{filepath.ToSlash(rel): string(data)})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestOtherAgentsCommandsAndSkills: Claude Code commands (argument-hint:
// [scope], allowed-tools, description, model) and Agent Skills folders
// placed under .jido load with no diagnostic and work: as tools (the
// command expands, the skill gives its instructions and where the files
// beside it are, which read_file reads) and, over MCP, as prompts.
func TestOtherAgentsCommandsAndSkills(t *testing.T) {
	node := StartNode(t, tools, t.TempDir())
	run := projectCLI(t, node)
	proj := t.TempDir()
	writeProjectTree(t, proj, map[string]string{"src/a.go": "package a\n"})
	copyInto(t, filepath.Join(compatFixtures(t), "commands"), filepath.Join(proj, ".jido", "commands"))
	copyInto(t, filepath.Join(compatFixtures(t), "skills"), filepath.Join(proj, ".jido", "skills"))
	run("project", "open", proj, "--id", "web")

	var diags struct {
		Diagnostics []struct{ File, Reason string }
	}
	if err := json.Unmarshal([]byte(run("project", "diagnostics", "web", "-o", "json")), &diags); err != nil {
		t.Fatal(err)
	}
	if len(diags.Diagnostics) != 0 {
		t.Fatalf("diagnostics: %+v", diags.Diagnostics)
	}
	names := toolNames(t, run, "web")
	for _, want := range []string{"command_models", "command_doctor", "command_review", "skill_internal-comms", "skill_release-notes"} {
		if !slices.Contains(names, want) {
			t.Errorf("project tools does not offer %s: %v", want, names)
		}
	}
	var asset struct {
		Asset struct {
			ArgumentHint           string   `json:"argument_hint"`
			AllowedTools           []string `json:"allowed_tools"`
			Model                  string
			DisableModelInvocation bool `json:"disable_model_invocation"`
		}
	}
	if err := json.Unmarshal([]byte(run("project", "assets", "web", "--kind", "command", "--name", "review", "-o", "json")), &asset); err != nil {
		t.Fatal(err)
	}
	if a := asset.Asset; a.ArgumentHint != "[scope]" || a.Model != "claude-3-5-haiku-20241022" || !a.DisableModelInvocation || len(a.AllowedTools) != 4 {
		t.Errorf("command review as listed: %+v", a)
	}
	if out := run("project", "call", "web", "command_review", `{"arguments":["src/"]}`); !strings.Contains(out, "Review the changes in src/ since the last release.") {
		t.Errorf("command_review: %s", out)
	}
	var sk struct {
		Data struct {
			Body, Dir string
			Files     []string
		}
	}
	if err := json.Unmarshal([]byte(run("project", "call", "web", "skill_internal-comms", `{}`, "-o", "json")), &sk); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sk.Data.Body, "examples/general-comms.md") || sk.Data.Dir != ".jido/skills/internal-comms" || !slices.Contains(sk.Data.Files, "examples/general-comms.md") {
		t.Fatalf("skill_internal-comms: dir %q files %q body %.80q", sk.Data.Dir, sk.Data.Files, sk.Data.Body)
	}
	if out := run("project", "call", "web", "read_file", `{"path":"`+sk.Data.Dir+`/examples/general-comms.md"}`); !strings.Contains(out, "general") {
		t.Errorf("the skill's file through read_file: %.200s", out)
	}

	// Over MCP, the commands are prompts, their hint as written.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.Command(tools.JidoBus, "mcp", "--project", proj, "--id", "ide", "--data-dir", t.TempDir())
	var stderr testkit.Buffer
	cmd.Stderr = &stderr
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "e2e", Version: "1"}, nil).Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr.String())
	}
	defer cs.Close()
	prompts, err := cs.ListPrompts(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var hints []string
	for _, p := range prompts.Prompts {
		for _, a := range p.Arguments {
			hints = append(hints, p.Name+": "+a.Description)
		}
	}
	for _, want := range []string{"[modality|service|action]", "[--strict] [--json]", "[scope]"} {
		if !slices.ContainsFunc(hints, func(h string) bool { return strings.Contains(h, want) }) {
			t.Errorf("no prompt argument shows the hint %s: %q", want, hints)
		}
	}
	pr, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "doctor", Arguments: map[string]string{"arguments": "--json"}})
	if err != nil {
		t.Fatal(err)
	}
	if txt := pr.Messages[0].Content.(*sdk.TextContent).Text; !strings.Contains(txt, "Full argument string: `--json`") {
		t.Errorf("prompt doctor: %.300q", txt)
	}
}

// TestPolicyEditKeepsTheOperatorsSandbox: the node's operator's rules for
// commands (serve --sandbox-read, sandbox.limits in --config) are not the
// project's to change: a policy file edited to ask for more processes
// than the cap, or for weaker confinement the operator does not allow,
// is followed for what it may say and capped for the rest, and what
// commands read stays the operator's.
func TestPolicyEditKeepsTheOperatorsSandbox(t *testing.T) {
	cfgDir, shared := t.TempDir(), t.TempDir()
	cfg := filepath.Join(cfgDir, "serve.yaml")
	if err := os.WriteFile(cfg, []byte("sandbox:\n  limits:\n    processes: 64\n    cpu_seconds: 30\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	node := StartNode(t, tools, t.TempDir(), "--config", cfg, "--sandbox-read", shared)
	run := projectCLI(t, node)
	proj := t.TempDir()
	writeProjectTree(t, proj, map[string]string{".jido/policy.yaml": "commands:\n  programs: [cat]\n"})
	run("project", "open", proj, "--id", "web")
	type report struct {
		Sandbox struct {
			RunCommand string `json:"run_command"`
			Reads      []string
			Limits     struct {
				Processes  int `json:"processes"`
				CPUSeconds int `json:"cpu_seconds"`
			}
		}
	}
	get := func() report {
		var r report
		if err := json.Unmarshal([]byte(run("project", "get", "web", "-o", "json")), &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	before := get()
	changed, changedDone := node.StartNATS(t, "sub", "jido.emit.web.project.policy.changed", "--count", "1")
	testkit.Eventually(t, "the policy subscription", func() bool { return strings.Contains(changed.String(), "Subscribing") })
	writeProjectTree(t, proj, map[string]string{".jido/policy.yaml": "commands:\n  programs: [cat]\n  without_namespaces: warn\n  without_landlock: warn\n  limits:\n    processes: 100000\n    cpu_seconds: 999999\n"})
	if err := changedDone(); err != nil || !strings.Contains(changed.String(), "100000") {
		t.Fatalf("the edit was not followed: %v\n%s", err, changed.String())
	}
	after := get()
	if after.Sandbox.Limits.Processes != 64 || after.Sandbox.Limits.CPUSeconds != 30 {
		t.Errorf("after the edit the limits are %+v, want the operator's caps (64 processes, 30 s)", after.Sandbox.Limits)
	}
	if !slices.Contains(after.Sandbox.Reads, shared) || !slices.Equal(after.Sandbox.Reads, before.Sandbox.Reads) {
		t.Errorf("what commands read changed: %v, was %v", after.Sandbox.Reads, before.Sandbox.Reads)
	}
	if after.Sandbox.RunCommand == "weaker" {
		t.Errorf("run_command runs weaker than promised, which the operator did not allow: %+v", after.Sandbox)
	}
}
