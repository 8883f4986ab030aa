package projects_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/jido-bus/jido-bus/projects"
	"github.com/jido-bus/jido-bus/projects/tools"
)

// TestOpenRefusesOldAssetToolNamesInThePolicy: a policy glob naming asset
// tools the way they were named before the rename (command.*, a deny that
// would now match nothing and silently stop applying) is refused at open,
// from the project's file or the request, with the name to write.
func TestOpenRefusesOldAssetToolNamesInThePolicy(t *testing.T) {
	n := startNode(t, t.TempDir(), false)
	defer closeNode(t, n)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{".jido/policy.yaml": "tools:\n  \"*\": allow\n  \"command.*\": deny\n  skill_graph.search: ask\n"})
	_, err := n.Projects().Open(context.Background(), projects.OpenRequest{Root: dir, ID: "p1"})
	for _, want := range []string{`"command.*" (now "command_*")`, `"skill_graph.search" (now "skill_graph_search")`, ".jido/policy.yaml"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("open: %v; want it refused naming %s", err, want)
		}
	}
	_, err = n.Projects().Open(context.Background(), projects.OpenRequest{Root: t.TempDir(), ID: "p2", Policy: json.RawMessage(`{"tools":{"skill.*":"deny","*":"allow"}}`)})
	if err == nil || !strings.Contains(err.Error(), `"skill.*" (now "skill_*")`) {
		t.Errorf("open with a policy: %v; want it refused naming skill_*", err)
	}
	writeFiles(t, dir, map[string]string{".jido/policy.yaml": "tools:\n  \"*\": allow\n  \"command_*\": deny\n", ".jido/commands/hi.md": "hi\n"})
	if _, err := n.Projects().Open(context.Background(), projects.OpenRequest{Root: dir, ID: "p1"}); err != nil {
		t.Fatalf("the new names: %v", err)
	}
	ts, err := n.Projects().Tools("p1")
	if err != nil {
		t.Fatal(err)
	}
	var offered []string
	for _, s := range ts {
		offered = append(offered, s.Name)
	}
	if all := strings.Join(offered, " "); strings.Contains(all, "command_") || !strings.Contains(all, "read_file") {
		t.Errorf("offered %s; command_* is denied, the rest allowed", all)
	}
	if _, err := n.Projects().CallTool(context.Background(), "p1", tools.ToolCall{Name: "command_hi"}); err == nil {
		t.Error("command_hi ran; command_* is denied")
	}
}
