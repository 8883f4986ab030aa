package conversation

import (
	"encoding/json"
	"fmt"

	"github.com/jido-bus/jido-bus/agents"
	"github.com/jido-bus/jido-bus/bus"
)

// Directive kinds of the conversation loop.
const (
	KindLLMCall    = "llm_call"
	KindRunTool    = "run_tool"
	KindRecord     = "record"
	KindCancelTurn = "cancel_turn"
	KindCompact    = "compact"
)

// LLMCall asks for one attempt at an LLM completion for conversation
// Conversation. Its executor appends conversation.llm.requested (id
// Request), streams the answer (deltas are published, never logged) and
// feeds the outcome back as conversation events whose causationid is
// Request: the assistant message, one conversation.tool.requested per tool
// call, then conversation.llm.completed — or conversation.llm.failed. The
// context the model sees is the conversation's llm_context read model as
// committed when the call starts; the tools are the project's catalog as
// its policy lets it be offered.
type LLMCall struct {
	Conversation string `json:"conversation"`
	Request      string `json:"request"`
	Step         int    `json:"step"`
	Attempt      int    `json:"attempt"`
	// DelayMS is waited before the attempt: the backoff the failed
	// attempt before it chose.
	DelayMS int64 `json:"delay_ms,omitempty"`
	// LLM overrides the project's model settings for this conversation
	// (from conversation.started); it never holds a key.
	LLM *LLMConfig `json:"llm,omitempty"`
	// Tools, of a delegated conversation, are the only tools offered to
	// its model (nil: the project's as its policy offers them).
	Tools *[]string `json:"tools,omitempty"`
}

// RunTool asks for one tool call through the project's runner. Its
// executor feeds back conversation.tool.started and then completed,
// failed, timeout or cancelled — or, when the project's policy says the
// tool needs a person's approval and Approved is false,
// conversation.tool.approval.requested.
type RunTool struct {
	Conversation string          `json:"conversation"`
	CallID       string          `json:"call_id"`
	Name         string          `json:"name"`
	Args         json.RawMessage `json:"args,omitempty"`
	// Approved is set when a person approved this call (or this tool for
	// the conversation): the runner then runs a tool its policy asks for.
	Approved bool `json:"approved,omitempty"`
	// Mode is the conversation's permission mode when the loop started
	// the call ("" is ModeAuto): in ModePlan the runner refuses a tool
	// that writes or runs, approved or not; in ModeAsk such a tool waits
	// for a person's approval unless Approved.
	Mode string `json:"mode,omitempty"`
	// Budget, of a DelegateTool call under a budget, is what is left of
	// the conversation's when the call starts: the child's own budget.
	Budget *Budget `json:"budget,omitempty"`
	// Hooked is set once the project's tool.before hook allowed the call
	// (conversation.hook.decided): the executor runs it without asking
	// again. Without it, a project that hooks tool.before has the hook
	// asked and the decision recorded instead of the call run.
	Hooked bool `json:"hooked,omitempty"`
}

// Record appends Event, a conversation event the loop decided itself (a
// tool call it refuses, a turn it ends), by handing it to the conversation
// like any other. Its id derives from what it closes, so a repeat after a
// crash is dropped by the log.
type Record struct {
	Event bus.Signal `json:"event"`
}

// CancelTurn cancels the work in flight of conversation Conversation: the
// provider's stream and the running tools, whose executors then record
// conversation.llm.failed (cancelled) and conversation.tool.cancelled.
type CancelTurn struct {
	Conversation string `json:"conversation"`
	Reason       string `json:"reason,omitempty"`
}

// Compact asks the model for a summary of conversation Conversation's
// older messages, with no tools: Instruction is the summarising
// instruction sent as the system prompt; the messages to replace are
// those of llm_context before its most recent ones, the first user
// message (the task) excepted, keeping at least KeepTokens of the most
// recent (estimated; at least the last turn is always kept) and never
// splitting a tool call from its result. Its executor records
// conversation.compacted (causationid Request) with the summary and what
// it replaces, or conversation.compaction.failed; the summary is in the
// log, so a replay needs no model.
type Compact struct {
	Conversation string `json:"conversation"`
	Request      string `json:"request"`
	Instruction  string `json:"instruction"`
	KeepTokens   int64  `json:"keep_tokens,omitempty"`
	// Reason is why: window (the context neared the model's window) or
	// asked (conversation.compact).
	Reason string     `json:"reason"`
	LLM    *LLMConfig `json:"llm,omitempty"`
}

func (LLMCall) DirectiveKind() string    { return KindLLMCall }
func (Compact) DirectiveKind() string    { return KindCompact }
func (RunTool) DirectiveKind() string    { return KindRunTool }
func (Record) DirectiveKind() string     { return KindRecord }
func (CancelTurn) DirectiveKind() string { return KindCancelTurn }

// RegisterDirectives adds the loop's directive kinds to c, so that a
// runtime can log them and a replay can read them back.
func RegisterDirectives(c *agents.DirectiveCodec) error {
	for _, err := range []error{
		agents.RegisterDirective[LLMCall](c),
		agents.RegisterDirective[RunTool](c),
		agents.RegisterDirective[Record](c),
		agents.RegisterDirective[CancelTurn](c),
		agents.RegisterDirective[Compact](c),
	} {
		if err != nil {
			return fmt.Errorf("conversation directives: %w", err)
		}
	}
	return nil
}
