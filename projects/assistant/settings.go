package assistant

import "github.com/jido-bus/jido-bus/conversation"

// Settings are a project's assistant settings: the model and how long a
// call waits for a person's approval.
type Settings struct {
	LLM               LLMSettings `yaml:"llm"`
	ApprovalTimeoutMS int64       `yaml:"approval_timeout_ms"`
	// Instructions are the project's instructions for its model (its
	// AGENTS.md and .jido/instructions.md, read by the host, never from
	// config.yaml), sent as the system message of every call, before the
	// conversation's own; InstructionFiles names the files they came from.
	Instructions     string   `yaml:"-"`
	InstructionFiles []string `yaml:"-"`
	// InstructionPaths are further instruction files the project names
	// (instructions: in config.yaml, relative to its root: CLAUDE.md,
	// docs/conventions.md), read after AGENTS.md and before
	// .jido/instructions.md, as read_file would read them.
	InstructionPaths []string `yaml:"instructions"`
	// Delegation bounds the delegate tool (delegation: in config.yaml).
	Delegation DelegationSettings `yaml:"delegation"`
	// Hooks are the project's hooks: which points ask a NATS service or a
	// local command, how long they wait, what they decide unanswered.
	Hooks HookSettings `yaml:"hooks"`
	// Worktree: each conversation of the project works in its own git
	// worktree on its own branch (as conv start --worktree asks for one).
	Worktree bool `yaml:"worktree"`
}

// LLMSettings are a project's model settings (.jido/config.yaml): which of
// the node's providers (llm.Endpoint, by name), which model, and how. Where
// the key goes and which variable holds it are the provider's, which the
// node's operator configured: a project never names them.
type LLMSettings struct {
	Provider    string   `json:"provider,omitempty" yaml:"provider"`
	Model       string   `json:"model,omitempty" yaml:"model"`
	Temperature *float64 `json:"temperature,omitempty" yaml:"temperature"`
	MaxTokens   int      `json:"max_tokens,omitempty" yaml:"max_tokens"`
	TimeoutMS   int64    `json:"timeout_ms,omitempty" yaml:"timeout_ms"`
	// Script is the scripted provider's JSONL file, relative to the
	// project's root (scripted only).
	Script string `json:"script,omitempty" yaml:"script"`
}

// merge returns s with the members a conversation may override set from
// over: which of the node's providers, the model, the temperature, max
// tokens and the timeout. Which file a scripted provider reads (script)
// comes from the project's config file alone.
func (s LLMSettings) merge(over *conversation.LLMConfig) LLMSettings {
	if over == nil {
		return s
	}
	if over.Provider != "" && over.Provider != s.Provider {
		s.Provider = over.Provider
		s.Script = ""
	}
	if over.Model != "" {
		s.Model = over.Model
	}
	if over.Temperature != nil {
		s.Temperature = over.Temperature
	}
	if over.MaxTokens > 0 {
		s.MaxTokens = over.MaxTokens
	}
	if over.TimeoutMS > 0 {
		s.TimeoutMS = over.TimeoutMS
	}
	return s
}
