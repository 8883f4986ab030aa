package assets

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// flowMD is a workflow whose one step calls tool (or, with a "command:"
// prefix, a command).
func flowMD(name, tool string) string {
	step := "tool: " + tool
	if c, ok := strings.CutPrefix(tool, "command:"); ok {
		step = "command: " + c
	}
	return "---\nname: " + name + "\ndescription: d\n---\n```yaml\nsteps:\n  - id: a\n    " + step + "\n```\n"
}

func flowTree(t *testing.T) string {
	return tree(t, map[string]string{
		"skills/a/SKILL.md":        skillMD("a", "d"),
		"commands/git/commit.md":   "Commit $ARGUMENTS\n",
		"workflows/read.md":        flowMD("read", "read_file"),
		"workflows/commit.md":      flowMD("commit", "command:git:commit"),
		"skill_graph/index.md":     "# Index\n[[topic]]\n",
		"skill_graph/topic.md":     "# Topic\nback to [[index]]\n",
		"skill_graph/sub/other.md": "# Other\n",
	})
}

func onlyReadFile(name string) bool { return name == "read_file" }

func TestSnapshotHoldsWorkflowsAndTheGraph(t *testing.T) {
	dir := flowTree(t)
	s := load(t, dir, Options{KnownTools: onlyReadFile})
	if len(s.Diagnostics) != 0 {
		t.Fatalf("diagnostics %v", s.Diagnostics)
	}
	if w := s.Workflows["read"]; w == nil || w.Source.File != "workflows/read.md" || len(w.Source.Hash) != 64 || w.Steps[0].Tool != "read_file" {
		t.Fatalf("workflow read: %+v", w)
	}
	if w := s.Workflows["commit"]; w == nil || w.Steps[0].Tool != "command_git-commit" {
		t.Fatalf("workflow commit: %+v", w)
	}
	if s.Graph == nil || fmt.Sprint(s.Graph.IDs()) != "[index sub/other topic]" {
		t.Fatalf("graph %v", s.Graph)
	}
	if nb, _ := s.Graph.Neighbours("index"); fmt.Sprint(nb.Out, nb.In) != "[topic] [topic]" {
		t.Fatalf("neighbours %+v", nb)
	}
	// The digest covers workflows and notes: one edit to either is a new set.
	for _, rel := range []string{"workflows/read.md", "skill_graph/sub/other.md"} {
		before := load(t, dir, Options{KnownTools: onlyReadFile}).Digest
		write(t, dir, rel, "---\nname: read\ndescription: changed\n---\n```yaml\nsteps:\n  - {id: a, tool: read_file}\n```\n")
		if after := load(t, dir, Options{KnownTools: onlyReadFile}).Digest; after == before {
			t.Errorf("editing %s left the digest %s", rel, after)
		}
	}
}

// With no KnownTools a workflow may call the set's own commands and
// nothing else: a step naming any other tool is refused, never trusted.
func TestNilKnownToolsKnowsOnlyTheSetsCommands(t *testing.T) {
	s := load(t, flowTree(t), Options{})
	if s.Workflows["commit"] == nil {
		t.Fatalf("workflow calling the set's command refused: %v", s.Diagnostics)
	}
	if s.Workflows["read"] != nil {
		t.Fatal("workflow calling read_file loaded with nil KnownTools")
	}
	if d := diagFor(s, "workflows/read.md"); len(d) != 1 || !strings.Contains(d[0].Reason, `unknown tool "read_file"`) {
		t.Fatalf("diagnostics %v", s.Diagnostics)
	}
}

func TestReloadDiffsWorkflowsAndNotes(t *testing.T) {
	dir := flowTree(t)
	opts := Options{KnownTools: onlyReadFile}
	var set Set
	_, s1, ch, err := set.Reload(dir, opts)
	if err != nil || fmt.Sprint(ch.Workflows.Added, ch.Notes.Added) != "[commit read] [index sub/other topic]" {
		t.Fatalf("first load: %+v %v", ch, err)
	}
	// Nothing changed: an empty diff, and the very same workflow and
	// graph (nothing was read or linked again).
	_, s2, ch, _ := set.Reload(dir, opts)
	if !ch.Empty() || s2.Version != s1.Version || s2.Graph != s1.Graph || s2.Workflows["read"] != s1.Workflows["read"] {
		t.Fatalf("no-op reload: %+v, version %d→%d", ch, s1.Version, s2.Version)
	}
	write(t, dir, "workflows/read.md", strings.Replace(flowMD("read", "read_file"), "description: d", "description: new", 1))
	bump(t, dir, "workflows/read.md")
	write(t, dir, "workflows/late.md", flowMD("late", "read_file"))
	if err := os.Remove(filepath.Join(dir, "workflows/commit.md")); err != nil {
		t.Fatal(err)
	}
	write(t, dir, "skill_graph/topic.md", "# Topic, renamed\nback to [[index]]\n")
	bump(t, dir, "skill_graph/topic.md")
	write(t, dir, "skill_graph/new/idea.md", "# Idea\n[[topic]]\n")
	if err := os.Remove(filepath.Join(dir, "skill_graph/sub/other.md")); err != nil {
		t.Fatal(err)
	}
	_, s3, ch, _ := set.Reload(dir, opts)
	want := Changes{
		Workflows: KindDiff{Added: []string{"late"}, Changed: []string{"read"}, Removed: []string{"commit"}},
		Notes:     KindDiff{Added: []string{"new/idea"}, Changed: []string{"topic"}, Removed: []string{"sub/other"}},
	}
	if fmt.Sprint(ch.Workflows, ch.Notes) != fmt.Sprint(want.Workflows, want.Notes) || !ch.Skills.Empty() || !ch.Commands.Empty() || ch.Empty() {
		t.Fatalf("diff %+v", ch)
	}
	if s3.Version != s1.Version+1 || s3.Workflows["read"].Description != "new" {
		t.Fatalf("version %d, read %+v", s3.Version, s3.Workflows["read"])
	}
	if n, _ := s3.Graph.Node("topic"); n.Title != "Topic, renamed" {
		t.Fatalf("note not re-read: %+v", n)
	}
	if nb, _ := s3.Graph.Neighbours("topic"); fmt.Sprint(nb.In) != "[index new/idea]" {
		t.Fatalf("links not re-resolved: %+v", nb)
	}
	// Only a note's diagnostic changing (a link breaks because its target
	// went away) is a change too.
	if err := os.Remove(filepath.Join(dir, "skill_graph/new/idea.md")); err != nil {
		t.Fatal(err)
	}
	write(t, dir, "skill_graph/index.md", "# Index\n[[topic]] [[idea]]\n")
	_, _, ch, _ = set.Reload(dir, opts)
	if !ch.DiagnosticsChanged || len(ch.Diagnostics) != 1 || !strings.Contains(ch.Diagnostics[0].String(), `skill_graph/index.md:2: link [[idea]]: no note "idea"`) {
		t.Fatalf("diff %+v", ch)
	}
	// The broken link survives a reload that reuses the graph.
	_, s5, ch, _ := set.Reload(dir, opts)
	if !ch.Empty() || len(diagFor(s5, "skill_graph/index.md")) != 1 {
		t.Fatalf("no-op reload lost the link diagnostic: %+v %v", ch, s5.Diagnostics)
	}
}

// A workflow's file is not all it depends on: when the command or tool
// it calls goes away, the next reload refuses it though its file did not
// change, and takes it back when the tool returns.
func TestReloadRechecksAWorkflowWhoseToolCameOrWent(t *testing.T) {
	dir := flowTree(t)
	var set Set
	known := map[string]bool{"read_file": true}
	opts := Options{KnownTools: func(n string) bool { return known[n] }}
	if _, s, _, _ := set.Reload(dir, opts); len(s.Workflows) != 2 {
		t.Fatalf("workflows %v %v", keys(s.Workflows), s.Diagnostics)
	}
	if err := os.Remove(filepath.Join(dir, "commands/git/commit.md")); err != nil {
		t.Fatal(err)
	}
	known["read_file"] = false
	_, s, ch, _ := set.Reload(dir, opts)
	if len(s.Workflows) != 0 || fmt.Sprint(ch.Workflows.Removed) != "[commit read]" {
		t.Fatalf("workflows %v, diff %+v", keys(s.Workflows), ch)
	}
	if d := diagFor(s, "workflows/commit.md"); len(d) != 1 || !strings.Contains(d[0].Reason, `unknown command "git:commit"`) {
		t.Fatalf("diagnostics %v", s.Diagnostics)
	}
	write(t, dir, "commands/git/commit.md", "Commit\n")
	known["read_file"] = true
	_, s, ch, _ = set.Reload(dir, opts)
	if len(s.Workflows) != 2 || fmt.Sprint(ch.Workflows.Added) != "[commit read]" {
		t.Fatalf("workflows %v, diff %+v", keys(s.Workflows), ch)
	}
}
