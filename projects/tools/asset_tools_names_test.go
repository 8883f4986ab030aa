package tools

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jido-bus/jido-bus/projects/assets"
	"github.com/jido-bus/jido-bus/projects/policy"
)

// assetCatalog loads files (relative to a project root) as the engine
// does — the snapshot against the built-ins, then its workflows against
// the whole catalog — and returns the catalog and the diagnostics.
func assetCatalog(t *testing.T, files map[string]string) (*Catalog, []assets.Diagnostic) {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		full := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	data := filepath.Join(dir, ".jido")
	builtins, _ := NewCatalog(Builtins(Limits{})...)
	snap, err := assets.Load(data, assets.Options{KnownTools: builtins.Has})
	if err != nil {
		t.Fatal(err)
	}
	base, _ := NewCatalog(append(Builtins(Limits{}), AssetTools(Assets{Snapshot: snap}, Limits{})...)...)
	wfs, diags := assets.LoadWorkflows(os.DirFS(data), base.Has)
	graph, _ := assets.BuildGraph(os.DirFS(data))
	cat, err := NewCatalog(append(Builtins(Limits{}), AssetTools(Assets{Snapshot: snap, Workflows: wfs, Graph: graph}, Limits{})...)...)
	if err != nil {
		t.Fatal(err)
	}
	return cat, append(snap.Diagnostics, diags...)
}

const readWorkflow = "---\nname: peek\ndescription: Read a file\ninputs:\n  path: {type: string}\n---\n```yaml\nsteps:\n  - {id: r, tool: read_file, args: {path: \"{{inputs.path}}\"}}\n  - {id: e, command: explain, args: {arguments: [\"{{inputs.path}}\"], named: {topic: it, audience: me}}}\n```\n"

// TestAssetToolNames (issue 21, item 17): one rule names every asset tool,
// <kind>_<name> with a command's ':' as '-', the same for MCP, an LLM API,
// project tools and policy globs (MCP listed command.explain beside
// command_git-commit); the old names are refused with the new one.
func TestAssetToolNames(t *testing.T) {
	cat, diags := assetCatalog(t, map[string]string{
		".jido/commands/explain.md":    "---\ndescription: Explain a file\n---\nExplain $1.\n",
		".jido/commands/git/commit.md": "Commit $ARGUMENTS\n",
		".jido/skills/review/SKILL.md": "---\nname: review\ndescription: Review code for bugs\n---\nLook.\n",
		".jido/workflows/peek.md":      readWorkflow,
		".jido/skill_graph/index.md":   "# Index\n",
	})
	if len(diags) > 0 {
		t.Fatalf("diagnostics: %v", diags)
	}
	for _, want := range []string{"command_explain", "command_git-commit", "skill_review", "workflow_peek", "skill_graph_search", "skill_graph_node", "skill_graph_neighbours", "skill_graph_path"} {
		if !cat.Has(want) {
			t.Errorf("the catalog has no %s: %v", want, cat.Names())
		}
		if api, _ := cat.APIName(want); api != want {
			t.Errorf("%s goes by %q in LLM APIs: one name everywhere", want, api)
		}
	}
	for _, n := range cat.Names() {
		if strings.ContainsAny(n, ".:") {
			t.Errorf("tool %q is not of [A-Za-z0-9_-]", n)
		}
	}

	f := newFixture(t, map[string]string{"a.txt": "a"}, nil, Options{})
	f.runner.SetCatalog(cat)
	for old, now := range map[string]string{"command.git:commit": "command_git-commit", "skill.review": "skill_review", "skill_graph.search": "skill_graph_search", "workflow.peek": "workflow_peek"} {
		if e := f.fail(t, old, map[string]any{}, ReasonUnknownTool); !strings.Contains(e.Message, "call "+now) {
			t.Errorf("calling %s: %q does not name %s", old, e.Message, now)
		}
	}
}

// TestAssetToolsCollidingNames: commands git:commit and git-commit would
// be one tool, command_git-commit; both are refused, each diagnostic
// naming the tool and the other file, rather than one silently winning.
func TestAssetToolsCollidingNames(t *testing.T) {
	cat, diags := assetCatalog(t, map[string]string{
		".jido/commands/git/commit.md": "a\n",
		".jido/commands/git-commit.md": "b\n",
	})
	if cat.Has("command_git-commit") {
		t.Error("one of two commands claiming command_git-commit was kept")
	}
	if len(diags) != 2 || !strings.Contains(diags[0].Reason, "as the tool command_git-commit") {
		t.Fatalf("diagnostics %v, want both files refused, naming the tool", diags)
	}
}

// TestAssetToolSchemasAndDescriptions: a command's tool declares the
// {{name}} placeholders its body uses (required) and positional arguments
// only when its body takes them; descriptions read as sentences.
func TestAssetToolSchemasAndDescriptions(t *testing.T) {
	cat, _ := assetCatalog(t, map[string]string{
		".jido/commands/explain.md":    "---\ndescription: Explain a file\nargument-hint: <path>\n---\nExplain {{topic}} in $1 for {{ audience }}.\n",
		".jido/commands/plain.md":      "Say hi to {{who}}\n",
		".jido/skills/review/SKILL.md": "---\nname: review\ndescription: Review code for bugs\n---\nLook.\n",
		".jido/workflows/peek.md":      readWorkflow,
	})
	schema := func(name string) map[string]any {
		tl, _ := cat.Get(name)
		var s map[string]any
		if err := json.Unmarshal(tl.InputSchema, &s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	props := func(m map[string]any) []string {
		var ks []string
		for k := range m["properties"].(map[string]any) {
			ks = append(ks, k)
		}
		slices.Sort(ks)
		return ks
	}
	ex := schema("command_explain")
	if got := props(ex); !slices.Equal(got, []string{"arguments", "named"}) {
		t.Errorf("command_explain takes %v", got)
	}
	named := ex["properties"].(map[string]any)["named"].(map[string]any)
	if got := props(named); !slices.Equal(got, []string{"audience", "topic"}) {
		t.Errorf("command_explain's named arguments: %v, want audience and topic", got)
	}
	if req := named["required"]; len(req.([]any)) != 2 || ex["required"].([]any)[0] != "named" {
		t.Errorf("named arguments not required: %v / %v", req, ex["required"])
	}
	if got := props(schema("command_plain")); !slices.Equal(got, []string{"named"}) {
		t.Errorf("command_plain (no $ARGUMENTS) takes %v", got)
	}
	f := newFixture(t, map[string]string{"a.txt": "a"}, nil, Options{})
	f.runner.SetCatalog(cat)
	f.fail(t, "command_plain", map[string]any{"named": map[string]string{"whom": "x"}}, ReasonInvalidArgs)
	var out commandOutput
	f.ok(t, "command_plain", map[string]any{"named": map[string]string{"who": "you"}}, &out)

	for _, d := range cat.Details(policy.Default()) {
		if desc := strings.TrimSpace(d.Description); !strings.HasSuffix(desc, ".") || strings.Contains(desc, "  ") || strings.Contains(desc, ". .") {
			t.Errorf("%s: %q is not a sentence", d.Name, d.Description)
		}
	}
	if d, _ := cat.Get("command_explain"); !strings.HasPrefix(d.Description, "Explain a file. Arguments: <path>. ") {
		t.Errorf("command_explain: %q", d.Description)
	}
	if d, _ := cat.Get("workflow_peek"); !strings.Contains(d.Description, "Runs read_file, then command_explain") {
		t.Errorf("workflow_peek: %q", d.Description)
	}
}

// TestWorkflowSafetyIsItsSteps: a workflow is as safe as its steps' tools:
// one that only reads is read-only and offered under the default policy
// (no commands.programs), one that runs a command is hidden with
// run_command (it was offered as writing and running, so never).
func TestWorkflowSafetyIsItsSteps(t *testing.T) {
	runs := "---\nname: build\ndescription: Build it\n---\n```yaml\nsteps:\n  - {id: m, tool: run_command, args: {argv: [make]}}\n```\n"
	writes := "---\nname: stamp\ndescription: Stamp it\n---\n```yaml\nsteps:\n  - {id: w, tool: write_file, args: {path: a.txt, content: x}}\n```\n"
	cat, diags := assetCatalog(t, map[string]string{
		".jido/commands/explain.md": "Explain {{topic}} $1 {{audience}}\n",
		".jido/workflows/peek.md":   readWorkflow,
		".jido/workflows/build.md":  runs,
		".jido/workflows/stamp.md":  writes,
	})
	if len(diags) > 0 {
		t.Fatalf("diagnostics: %v", diags)
	}
	offered := map[string]Safety{}
	for _, d := range cat.Details(policy.Default()) {
		offered[d.Name] = d.Safety
	}
	if s, ok := offered["workflow_peek"]; !ok || s != (Safety{Reads: true}) {
		t.Errorf("workflow_peek (reads only): offered %v, safety %+v", ok, s)
	}
	if s := offered["workflow_stamp"]; s != (Safety{Reads: true, Writes: true}) {
		t.Errorf("workflow_stamp (writes): safety %+v", s)
	}
	if _, ok := offered["workflow_build"]; ok {
		t.Error("workflow_build (runs make) is offered while the policy lists no programs")
	}
}
