package tools

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jido-bus/jido-bus/projects/assets"
	"github.com/jido-bus/jido-bus/projects/policy"
)

func TestAssetTools(t *testing.T) {
	wf := func(name, steps string) string {
		return "---\nname: " + name + "\ndescription: d\ninputs:\n  path: {type: string}\n---\n\n```yaml\nsteps:\n" + steps + "```\n"
	}
	f := newFixture(t, map[string]string{
		"notes.txt":                    "NOTES",
		".env":                         "SECRET",
		".jido/commands/git/greet.md":  "---\ndescription: greets\nwhen_to_use: when someone arrives\n---\nHello $1 and {{who}}, see @notes.txt",
		".jido/commands/leak.md":       "show @.env",
		".jido/skills/review/SKILL.md": "---\nname: review\ndescription: reviews code\n---\nDo the review, as references/checklist.md says.\n",
		".jido/skills/review/references/checklist.md": "CHECK",
		".jido/workflows/ok.md":                       wf("ok", "  - id: r\n    tool: read_file\n    args: {path: \"{{inputs.path}}\"}\n  - id: g\n    command: git:greet\n    args: {arguments: [\"{{steps.r.output.content}}\"], named: {who: me}}\n"),
		".jido/workflows/bad.md":                      wf("bad", "  - id: r\n    tool: read_file\n    args: {path: \"{{inputs.path}}\"}\n  - id: w\n    tool: write_file\n    args: {path: .jido/commands/evil.md, content: x}\n"),
		".jido/skill_graph/index.md":                  "# Index\n[[a]]\n",
		".jido/skill_graph/a.md":                      "# Alpha\nabout testing\n[[b]]\n",
		".jido/skill_graph/b.md":                      "# Beta\n",
	}, nil, Options{})
	data := filepath.Join(f.dir, ".jido")
	builtins, _ := NewCatalog(Builtins(Limits{})...)
	snap, err := assets.Load(data, assets.Options{KnownTools: builtins.Has})
	if err != nil || len(snap.Diagnostics) > 0 {
		t.Fatalf("load: %v %v", err, snap.Diagnostics)
	}
	base, _ := NewCatalog(append(Builtins(Limits{}), AssetTools(Assets{Snapshot: snap}, Limits{})...)...)
	wfs, diags := assets.LoadWorkflows(os.DirFS(data), base.Has)
	graph, gdiags := assets.BuildGraph(os.DirFS(data))
	if len(diags)+len(gdiags) > 0 || len(wfs) != 2 {
		t.Fatalf("workflows %d: %v %v", len(wfs), diags, gdiags)
	}
	cat, err := NewCatalog(append(Builtins(Limits{}), AssetTools(Assets{Snapshot: snap, Workflows: wfs, Graph: graph}, Limits{})...)...)
	if err != nil {
		t.Fatal(err)
	}
	f.runner.SetCatalog(cat)

	// Claude Code's when_to_use joins the description a model sees.
	for _, sp := range cat.List(policy.Default()) {
		if sp.Name == "command_git-greet" && !strings.HasPrefix(sp.Description, "greets. when someone arrives.") {
			t.Errorf("command_git-greet's description: %q", sp.Description)
		}
	}

	var cmd commandOutput
	f.ok(t, "command_git-greet", map[string]any{"arguments": []string{"you"}, "named": map[string]string{"who": "them"}}, &cmd)
	if cmd.Text != "Hello you and them, see @notes.txt" || len(cmd.Includes) != 1 || cmd.Includes[0].Content != "NOTES" {
		t.Fatalf("command: %+v", cmd)
	}
	f.fail(t, "command_git-greet", map[string]any{"arguments": []string{"you"}}, ReasonInvalidArgs)
	f.fail(t, "command_leak", map[string]any{}, ReasonDenied) // its include goes through the policy

	// A skill's tool says where the files its body names are, and
	// read_file reads them there.
	var sk skillOutput
	f.ok(t, "skill_review", map[string]any{}, &sk)
	if sk.Body != "Do the review, as references/checklist.md says.\n" || sk.Dir != ".jido/skills/review" ||
		strings.Join(sk.Files, ",") != "references/checklist.md" || sk.More {
		t.Fatalf("skill: %+v", sk)
	}
	var ref struct{ Content string }
	f.ok(t, "read_file", map[string]any{"path": sk.Dir + "/" + sk.Files[0]}, &ref)
	if ref.Content != "CHECK" {
		t.Fatalf("the skill's file read through read_file: %q", ref.Content)
	}

	var out struct{ Steps []assets.StepOutput }
	f.ok(t, "workflow_ok", map[string]any{"path": "notes.txt"}, &out)
	if len(out.Steps) != 2 || !strings.Contains(string(mustJSON(out.Steps[1].Output)), "Hello NOTES and me") {
		t.Fatalf("workflow ok: %+v", out)
	}
	e := f.fail(t, "workflow_bad", map[string]any{"path": "notes.txt"}, ReasonDenied)
	if !strings.Contains(e.Message, `step "w"`) {
		t.Fatalf("workflow failure does not name its step: %s", e.Message)
	}
	f.fail(t, "workflow_ok", map[string]any{}, ReasonInvalidArgs)
	// Every step was a call of its own, a child of the workflow's.
	var children int
	for _, ev := range f.obs.last {
		if ev.Parent != "" {
			children++
		}
	}
	if children != 8 { // 2 steps of ok, 2 of bad, each started+ended
		t.Fatalf("observer saw %d child events, want 8: %v", children, f.obs.got())
	}

	var hits struct{ Hits []assets.SearchHit }
	f.ok(t, "skill_graph_search", map[string]any{"query": "testing"}, &hits)
	if len(hits.Hits) != 1 || hits.Hits[0].ID != "a" {
		t.Fatalf("search: %+v", hits)
	}
	var node assets.Node
	f.ok(t, "skill_graph_node", map[string]any{"id": "a"}, &node)
	if node.Title != "Alpha" {
		t.Fatalf("node: %+v", node)
	}
	var nb assets.Neighbours
	f.ok(t, "skill_graph_neighbours", map[string]any{"id": "a"}, &nb)
	if len(nb.In) != 1 || len(nb.Out) != 1 {
		t.Fatalf("neighbours: %+v", nb)
	}
	var p struct{ Path []string }
	f.ok(t, "skill_graph_path", map[string]any{"from": "index", "to": "b"}, &p)
	if strings.Join(p.Path, ">") != "index>a>b" {
		t.Fatalf("path: %v", p.Path)
	}
	f.fail(t, "skill_graph_node", map[string]any{"id": "zz"}, "not_found")

	// A policy that denies the asset tools hides them from List.
	deny := policy.Default()
	deny.Tools = map[string]policy.Mode{"*": policy.ModeAllow, "skill_graph_*": policy.ModeDeny, "command_*": policy.ModeDeny}
	for _, s := range cat.List(deny) {
		if strings.HasPrefix(s.Name, "skill_graph_") || strings.HasPrefix(s.Name, "command_") {
			t.Fatalf("List shows denied %s", s.Name)
		}
	}
}

func mustJSON(v any) []byte { b, _ := json.Marshal(v); return b }
