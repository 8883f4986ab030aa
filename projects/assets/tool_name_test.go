package assets

import (
	"strings"
	"testing"
)

func TestToolNameAndRenamedTool(t *testing.T) {
	for _, c := range []struct{ kind, name, want string }{
		{KindCommand, "explain", "command_explain"},
		{KindCommand, "git:commit", "command_git-commit"},
		{KindCommand, "a:b_c-d", "command_a-b_c-d"},
		{KindSkill, "review", "skill_review"},
		{KindWorkflow, "ship_it", "workflow_ship_it"},
	} {
		if got := ToolName(c.kind, c.name); got != c.want {
			t.Errorf("ToolName(%s, %s) = %s, want %s", c.kind, c.name, got, c.want)
		}
	}
	for old, want := range map[string]string{
		"command.git:commit": "command_git-commit", "command.*": "command_*", "command.git:*": "command_git-*",
		"skill.review": "skill_review", "workflow.x": "workflow_x", "skill_graph.*": "skill_graph_*",
		"read_file": "", "command_x": "", "*": "", "mytool.x": "",
	} {
		got, ok := RenamedTool(old)
		if got != want || ok != (want != "") {
			t.Errorf("RenamedTool(%s) = %q %v, want %q", old, got, ok, want)
		}
	}
}

// TestWorkflowStepWithAnOldToolName: a step naming an asset tool by its
// name before the rename is refused with the name to write instead.
func TestWorkflowStepWithAnOldToolName(t *testing.T) {
	_, diags := ParseWorkflow("workflows/w.md", []byte(workflowWith(okFront, "steps:\n  - {id: a, tool: command.git:commit}\n")), knownTools)
	if len(diags) != 1 || !strings.Contains(diags[0].Reason, "write tool: command_git-commit") {
		t.Fatalf("diagnostics %v, want one naming command_git-commit", diags)
	}
}
