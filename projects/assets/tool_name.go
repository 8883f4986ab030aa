package assets

import "strings"

// Kinds of asset that become tools.
const (
	KindCommand  = "command"
	KindSkill    = "skill"
	KindWorkflow = "workflow"
)

// ToolName is the one name the tool of an asset goes by everywhere — the
// catalog, MCP, an LLM's tool list, `project call`, policy globs, the log:
// <kind>_<name>, a command's folder separator ':' written '-'
// (command_review, command_git-commit, skill_review, workflow_show). It
// is of the alphabet every client accepts, [A-Za-z0-9_-], as MCP servers'
// tools are named. Two commands whose names give one tool name
// (git:commit and git-commit) are both refused when the set loads.
func ToolName(kind, name string) string {
	return kind + "_" + strings.ReplaceAll(name, ":", "-")
}

// legacyKinds are the prefixes asset tools had before ToolName:
// command.<name>, skill.<name>, workflow.<name>, skill_graph.<verb>.
var legacyKinds = []string{KindCommand, KindSkill, KindWorkflow, "skill_graph"}

// RenamedTool reports whether name is an asset tool's name as it was
// before ToolName (command.git:commit, skill_graph.search), and what it is
// now (command_git-commit, skill_graph_search). A glob is renamed the same
// way (command.* is command_*). Callers refuse the old name with the new
// one in the message: a policy glob written for the old names would
// otherwise match nothing and silently stop applying.
func RenamedTool(name string) (string, bool) {
	for _, k := range legacyKinds {
		if rest, ok := strings.CutPrefix(name, k+"."); ok {
			return k + "_" + strings.ReplaceAll(rest, ":", "-"), true
		}
	}
	return "", false
}
