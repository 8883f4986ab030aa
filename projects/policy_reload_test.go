package projects_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/internal/testkit"
	"github.com/jido-bus/jido-bus/node"
	"github.com/jido-bus/jido-bus/projects"
	"github.com/jido-bus/jido-bus/projects/assets"
	"github.com/jido-bus/jido-bus/projects/tools"
)

// callErr is the refusal type of a call of tool in project p ("" when it
// succeeds).
func callErr(t *testing.T, e *projects.Engine, p, tool, args string) string {
	t.Helper()
	_, err := e.CallTool(context.Background(), p, tools.ToolCall{Name: tool, Args: json.RawMessage(args)})
	if te, ok := errors.AsType[*tools.Error](err); ok {
		return te.Type
	}
	if err != nil {
		return bus.ErrorType(err)
	}
	return ""
}

// stateOf reads the policy source and the policy's tools that project
// p's agent keeps in its state (from which a restart rebuilds it).
func stateOf(t *testing.T, n *node.Node, p string) (string, map[string]string) {
	t.Helper()
	st, err := n.Runtime().State(p)
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		PolicySource string `json:"policy_source"`
		Policy       struct {
			Tools map[string]string `json:"tools"`
		} `json:"policy"`
	}
	if err := json.Unmarshal(st.State, &s); err != nil {
		t.Fatal(err)
	}
	return s.PolicySource, s.Policy.Tools
}

func count(types []string, typ string) int {
	n := 0
	for _, t := range types {
		if t == typ {
			n++
		}
	}
	return n
}

// TestPolicyFileEditsTakeEffect: the policy file of an open project is
// followed like its assets. An edit changes what is allowed, is recorded
// in the project's stream (project.policy.changed, its changes listed)
// and in the agent's state, and reload says so; an edit into a file that
// does not load, asks for more than the node allows, is an old allow-list
// or a symlink is refused once per reason, listed among the diagnostics,
// and the last good policy stays (never the defaults); removing the file
// is the defaults again. A restart keeps the policy in force and follows
// an edit made while the node was down.
func TestPolicyFileEditsTakeEffect(t *testing.T) {
	dataDir := t.TempDir()
	n := startNode(t, dataDir, false)
	e := n.Projects()
	ctx := context.Background()
	dir := projectDir(t)
	pol := func(s string) { writeFiles(t, dir, map[string]string{".jido/policy.yaml": s}) }
	pol("tools:\n  write_file: deny\n")
	if _, err := e.Open(ctx, projects.OpenRequest{Root: dir, ID: "p1"}); err != nil {
		t.Fatal(err)
	}
	const write = `{"path":"out.txt","content":"x"}`
	if got := callErr(t, e, "p1", "write_file", write); got != "denied" {
		t.Fatalf("write_file under write_file: deny: %q", got)
	}
	if got := callErr(t, e, "p1", "read_file", `{"path":"main.go"}`); got != "" {
		t.Fatalf("read_file, which the file does not name: %q", got)
	}

	pol("tools:\n  run_command: ask\n")
	r, err := e.Reload(ctx, "p1")
	if err != nil {
		t.Fatal(err)
	}
	if !r.Policy.Changed || r.Policy.Source != ".jido/policy.yaml" ||
		!slices.Equal(r.Policy.Changes, []string{"tools.run_command: (none) -> ask", "tools.write_file: deny -> (none)"}) {
		t.Fatalf("reload after the edit: %+v", r.Policy)
	}
	if got := callErr(t, e, "p1", "write_file", write); got != "" {
		t.Fatalf("write_file once the file no longer denies it: %q", got)
	}
	if src, tl := stateOf(t, n, "p1"); src != ".jido/policy.yaml" || tl["run_command"] != "ask" || tl["*"] != "allow" || tl["write_file"] != "" {
		t.Fatalf("the agent's state keeps %s %v", src, tl)
	}
	if r, err := e.Reload(ctx, "p1"); err != nil || r.Policy.Changed || r.Policy.Refused != "" {
		t.Fatalf("a reload with the file unchanged: %+v %v", r.Policy, err)
	}

	// Broken files: the last good policy (run_command: ask, the rest
	// allowed) stays, whatever the file says.
	for _, c := range []struct{ name, file, reason string }{
		{"not YAML", "tools: [\n", "policy.yaml"},
		{"unknown key", "tools:\n  write_file: deny\nmistake: 1\n", "unknown field"},
		{"old allow-list", "tools:\n  read_file: allow\n", `"*": deny`},
		{"more env than the node allows", "commands:\n  env: [AWS_SECRET_ACCESS_KEY]\n", "does not let commands inherit"},
	} {
		pol(c.file)
		for range 2 { // the second check records nothing new
			r, err := e.Reload(ctx, "p1")
			if err != nil {
				t.Fatal(err)
			}
			if r.Policy.Changed || !strings.Contains(r.Policy.Refused, c.reason) || r.Policy.Source != ".jido/policy.yaml" {
				t.Fatalf("%s: reload %+v, want refused saying %q", c.name, r.Policy, c.reason)
			}
		}
		if got := callErr(t, e, "p1", "write_file", write); got != "" {
			t.Fatalf("%s: write_file under the last good policy: %q", c.name, got)
		}
		if got := callErr(t, e, "p1", "run_command", `{"argv":["true"]}`); got == "" {
			t.Fatalf("%s: run_command ran without the approval the last good policy asks", c.name)
		}
		ds, err := e.Diagnostics("p1")
		if err != nil || !slices.ContainsFunc(ds, func(d assets.Diagnostic) bool {
			return d.File == "policy.yaml" && strings.Contains(d.Reason, c.reason) && strings.Contains(d.Reason, "keeps its policy")
		}) {
			t.Fatalf("%s: diagnostics %v %v", c.name, ds, err)
		}
	}
	types, data := entries(t, n, "p1")
	if got := count(types, projects.TypePolicyRefused); got != 4 {
		t.Errorf("%d project.policy.refused entries, want one per distinct refusal (4): %v", got, types)
	}
	if i := slices.Index(types, projects.TypePolicyChanged); i < 0 || !strings.Contains(string(data[i]), `"changes":["tools.run_command: (none) -\u003e ask"`) {
		t.Errorf("no project.policy.changed entry with its changes: %v", types)
	}

	// A symlink is refused even to a file inside the root, which the
	// file tools may write (.jido is read-only to them, the root is not).
	writeFiles(t, dir, map[string]string{"shared.yaml": "tools:\n  \"*\": allow\n"})
	os.Remove(filepath.Join(dir, ".jido/policy.yaml"))
	if err := os.Symlink("../shared.yaml", filepath.Join(dir, ".jido/policy.yaml")); err != nil {
		t.Fatal(err)
	}
	if r, err := e.Reload(ctx, "p1"); err != nil || !strings.Contains(r.Policy.Refused, "symlink") {
		t.Fatalf("a symlinked policy file: %+v %v", r.Policy, err)
	}
	// Removed: the defaults again, as at open.
	os.Remove(filepath.Join(dir, ".jido/policy.yaml"))
	if r, err := e.Reload(ctx, "p1"); err != nil || !r.Policy.Changed || r.Policy.Source != projects.PolicyDefault {
		t.Fatalf("policy file removed: %+v %v", r.Policy, err)
	}
	if got := callErr(t, e, "p1", "run_command", `{"argv":["true"]}`); got != "denied" {
		t.Fatalf("run_command under the defaults (no programs): %q", got)
	}
	if ds, _ := e.Diagnostics("p1"); slices.ContainsFunc(ds, func(d assets.Diagnostic) bool { return d.File == "policy.yaml" }) {
		t.Fatalf("the refusal is still listed once the file is gone: %v", ds)
	}

	// A restart keeps the policy in force, and follows an edit made
	// while the node was down.
	pol("tools:\n  write_file: deny\n")
	closeNode(t, n)
	n = startNode(t, dataDir, false)
	defer closeNode(t, n)
	e = n.Projects()
	if got := callErr(t, e, "p1", "write_file", write); got != "denied" {
		t.Fatalf("after a restart, write_file under the file edited while down: %q", got)
	}
	if src, tl := stateOf(t, n, "p1"); src != ".jido/policy.yaml" || tl["write_file"] != "deny" {
		t.Fatalf("after a restart the agent's state keeps %s %v", src, tl)
	}
}

// TestPolicyFromTheRequestWins: a project opened with a policy in its
// request (the operator's, project open --policy) does not follow the
// policy file: an edit of the file changes nothing, and reload says why.
func TestPolicyFromTheRequestWins(t *testing.T) {
	n := startNode(t, t.TempDir(), false)
	defer closeNode(t, n)
	e := n.Projects()
	ctx := context.Background()
	dir := projectDir(t)
	if _, err := e.Open(ctx, projects.OpenRequest{Root: dir, ID: "p1", Policy: json.RawMessage(`{"tools":{"write_file":"deny"}}`)}); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, dir, map[string]string{".jido/policy.yaml": "tools:\n  \"*\": allow\n"})
	r, err := e.Reload(ctx, "p1")
	if err != nil || r.Policy.Changed || r.Policy.Source != projects.PolicyFromRequest || !strings.Contains(r.Policy.Ignored, "opened with a policy in its request") {
		t.Fatalf("reload: %+v %v", r.Policy, err)
	}
	if got := callErr(t, e, "p1", "write_file", `{"path":"o.txt","content":"x"}`); got != "denied" {
		t.Fatalf("the file overrode the request's policy: write_file %q", got)
	}
}

// TestPolicyFileWatched: with the watcher on, saving the policy file is
// enough: the project's tools follow it, and whoever follows the
// project's offer (OnAssetsChanged: the MCP gateway) hears of it; the
// data dir moved away is no reason to fall back to the defaults.
func TestPolicyFileWatched(t *testing.T) {
	n := startNode(t, t.TempDir(), true)
	defer closeNode(t, n)
	e := n.Projects()
	heard := make(chan string, 16)
	defer e.OnAssetsChanged(func(p string) { heard <- p })()
	dir := projectDir(t)
	if _, err := e.Open(context.Background(), projects.OpenRequest{Root: dir, ID: "p1"}); err != nil {
		t.Fatal(err)
	}
	<-heard // the open
	writeFiles(t, dir, map[string]string{".jido/policy.yaml": "tools:\n  write_file: deny\n"})
	select {
	case <-heard:
	case <-time.After(30 * time.Second):
		t.Fatal("the policy file's edit was not followed")
	}
	if got := callErr(t, e, "p1", "write_file", `{"path":"o.txt","content":"x"}`); got != "denied" {
		t.Fatalf("write_file after the watched edit: %q", got)
	}
	if got, _ := e.Get("p1"); got.PolicySource != ".jido/policy.yaml" {
		t.Fatalf("project get says the policy comes from %q", got.PolicySource)
	}

	// The data dir moved away (a checkout, a clean): its policy file is
	// gone with it, and the defaults it would mean are not what anyone
	// asked for: the policy in force stays, and the refusal is recorded.
	if err := os.Rename(filepath.Join(dir, ".jido"), filepath.Join(dir, "jido-away")); err != nil {
		t.Fatal(err)
	}
	testkit.EventuallyNil(t, "project.policy.refused once the data dir was gone", func() error {
		if types, _ := entries(t, n, "p1"); !slices.Contains(types, projects.TypePolicyRefused) {
			return fmt.Errorf("stream: %v", types)
		}
		return nil
	})
	if got := callErr(t, e, "p1", "write_file", `{"path":"o.txt","content":"x"}`); got != "denied" {
		t.Fatalf("with the data dir gone, write_file: %q (the defaults were taken)", got)
	}
}

// TestPolicyChangesListedAreBounded: a policy file of many entries
// changes many settings at once; the reload and the stream's entry list a
// hundred and count the rest (the policy itself is whole in the entry),
// so the entry stays small enough to commit.
func TestPolicyChangesListedAreBounded(t *testing.T) {
	n := startNode(t, t.TempDir(), false)
	defer closeNode(t, n)
	e := n.Projects()
	dir := projectDir(t)
	if _, err := e.Open(context.Background(), projects.OpenRequest{Root: dir, ID: "p1"}); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("tools:\n")
	for i := range 250 {
		fmt.Fprintf(&b, "  tool_%03d: deny\n", i)
	}
	writeFiles(t, dir, map[string]string{".jido/policy.yaml": b.String()})
	r, err := e.Reload(context.Background(), "p1")
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Policy.Changes) != 101 || r.Policy.Changes[100] != "... and 150 more" {
		t.Fatalf("%d changes listed, the last %q", len(r.Policy.Changes), r.Policy.Changes[len(r.Policy.Changes)-1])
	}
	if _, tl := stateOf(t, n, "p1"); tl["tool_249"] != "deny" || len(tl) != 251 {
		t.Fatalf("the policy kept is not whole: %d tools, tool_249 %q", len(tl), tl["tool_249"])
	}
}
