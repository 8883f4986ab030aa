package conversation

import "slices"

// DelegateTool is the name of the tool that hands a task to a child
// conversation (projects/assistant runs it): the child gets the task as
// its first user message, a subset of its parent's tools, a step limit,
// its parent's mode (or a stricter one) and what is left of its parent's
// budget, and its final answer is the call's output.
const DelegateTool = "delegate"

// ReasonDelegation fails a delegate call refused before a child started
// (past delegation.max_depth or delegation.max_fanout, a tool outside
// the parent's, a looser mode) or a child that ended without an answer.
const ReasonDelegation = "delegation_refused"

// ReasonNotDelegated fails a call of a tool outside a delegated
// conversation's tools (Data.Tools of its conversation.started): the
// loop refuses it without running it.
const ReasonNotDelegated = "not_delegated"

// Delegation is where a delegated conversation comes from (Data.Delegated
// of its conversation.started): the parent conversation's key, the call
// that started it, and its depth (1 for a child of a conversation started
// by a person, 2 for a grandchild).
type Delegation struct {
	Conversation string `json:"conversation"`
	CallID       string `json:"call_id"`
	Depth        int    `json:"depth"`
}

// allowsTool reports whether the conversation may call tool: every tool
// when it names none (Tools nil), else the tools it names.
func allowsTool(tools []string, tool string) bool {
	return tools == nil || slices.Contains(tools, tool)
}
