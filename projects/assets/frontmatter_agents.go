package assets

// agentKeys are the front matter keys Claude Code reads in both its
// commands (.claude/commands/*.md) and its skills (.claude/skills/<name>/
// SKILL.md) — its documentation's "Frontmatter reference" lists them for
// skills, and commands take the same — beyond the ones a jido-bus command
// or skill uses already. They are accepted so that an asset written for
// Claude Code loads unchanged. jido-bus keeps what it can use
// (when_to_use joins the description a model sees;
// disable-model-invocation is listed with the asset) and has no
// sub-agents, hooks, effort levels or path triggers for the rest.
type agentKeys struct {
	WhenToUse              string `yaml:"when_to_use"`
	DisableModelInvocation bool   `yaml:"disable-model-invocation"`
	UserInvocable          *bool  `yaml:"user-invocable"`
	Effort                 any    `yaml:"effort"`
	Context                any    `yaml:"context"`
	Agent                  any    `yaml:"agent"`
	Hooks                  any    `yaml:"hooks"`
	Paths                  any    `yaml:"paths"`
	Shell                  any    `yaml:"shell"`
	// Version and hide-from-slash-command-tool are not in the
	// reference, but Anthropic's own published plugins write them (a
	// skill's version; a command's hide-from-slash-command-tool).
	Version                  any `yaml:"version"`
	HideFromSlashCommandTool any `yaml:"hide-from-slash-command-tool"`
}

// agentKeyList names them for a diagnostic about an unknown key.
const agentKeyList = "when_to_use, disable-model-invocation, user-invocable, effort, context, agent, hooks, paths, shell, version, hide-from-slash-command-tool"
