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

func (LLMCall) DirectiveKind() string    { return KindLLMCall }
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
	} {
		if err != nil {
			return fmt.Errorf("conversation directives: %w", err)
		}
	}
	return nil
}
