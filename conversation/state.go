package conversation

import (
	"encoding/json"
	"fmt"
)

// AgentState is what a conversation agent's state says of the
// conversation: the members the agent keeps itself (NewAgentWith) and
// the loop's status. The runtime reports an agent's whole state as JSON;
// ReadState reads this from it, so that no one else parses it.
type AgentState struct {
	// Status is active, cancelled or stopped.
	Status string `json:"status"`
	// Events counts the conversation events taken: 0 for an agent
	// started without its conversation.started.
	Events      int    `json:"events"`
	LastEventID string `json:"last_event_id"`
	// PendingTools are the tool calls requested and not answered, by call
	// id (the tool's name).
	PendingTools map[string]string `json:"pending_tools"`
	// LLMRequest is the conversation.llm.requested in flight.
	LLMRequest string `json:"llm_request"`
	// Worktree is the branch of the git worktree the conversation works
	// in (conversation.started's); "": the project's checkout.
	Worktree string     `json:"worktree"`
	Loop     LoopStatus `json:"loop"`
}

// LoopStatus is the part of the loop's state others read.
type LoopStatus struct {
	// On: the project's assistant drives the conversation; off, it is
	// driven from outside and the loop decides nothing.
	On bool `json:"on"`
	// Request is the LLM call the loop decided and has no outcome for
	// yet (its conversation.llm.requested may not be committed).
	Request string `json:"request"`
	// Turn is the user message the turn in progress answers; "" between
	// turns.
	Turn string `json:"turn"`
	// Compact.Request is the compaction in flight.
	Compact struct {
		Request string `json:"request"`
	} `json:"compact"`
}

// ReadState reads a conversation agent's whole state, as JSON.
func ReadState(state json.RawMessage) (AgentState, error) {
	var s struct {
		Conversation AgentState `json:"conversation"`
	}
	if err := json.Unmarshal(state, &s); err != nil {
		return AgentState{}, fmt.Errorf("conversation state: %w", err)
	}
	return s.Conversation, nil
}

// OpenWork reports whether the state shows work a restart must close: a
// tool call requested and not answered, or an LLM call in flight, whether
// requested or only decided by the loop.
func (s AgentState) OpenWork() bool {
	return len(s.PendingTools) > 0 || s.LLMRequest != "" || s.Loop.Request != ""
}
