package convapi

import (
	"strings"

	"github.com/jido-bus/jido-bus/agents/runtime"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/conversation"
)

// fromPeople are the conversation events a client may send to a
// conversation the assistant drives: what a person says and decides.
// Every other conversation event of such a conversation (a model's
// answer, a tool call and its outcome) is written by the node's own
// executors; a client that could send them could make the loop run a tool
// no model asked for, or forge what the model said.
var fromPeople = map[string]bool{
	conversation.UserMessage:  true,
	conversation.Cancel:       true,
	conversation.Resume:       true,
	conversation.ToolApproval: true,
}

// Admit refuses, as forbidden, a conversation event sent from
// outside that only the node writes (a model's answer, a tool call or its
// outcome, a start) to a conversation whose loop is on, or to any
// conversation under the id of a project of the node (open, opening, or
// listed with an error): those ids are the project's, and its open stops
// any conversation under them started otherwise (a leftover of an older
// node, or an operator's agent start while it was closed), so an event
// forged in the meantime would be taken as the project's. Conversations
// driven from outside (no project of that id, no loop) take every
// conversation event, as before the assistant.
//
// The node asks it of every signal from outside to an agent (its
// subject, and the agent API's call and cast).
func (s *Service) Admit(agentID, typ string) error {
	if !strings.Contains(agentID, "/") || !strings.HasPrefix(typ, "conversation.") || fromPeople[typ] {
		return nil
	}
	project, _, _ := cut(agentID)
	if s.projects.Has(project) {
		return bus.Errorf(bus.ReasonForbidden, "conversation %s is under the id of project %s, whose assistant alone writes %s; a client sends conversation.user.message, conversation.cancel, conversation.resume or conversation.tool.approval (jido-bus conv send|cancel|approve)", agentID, project, typ)
	}
	info, err := s.rt.State(agentID)
	if err != nil {
		return nil
	}
	if st, err := conversation.ReadState(info.State); err != nil || !st.Loop.On {
		return nil
	}
	return bus.Errorf(bus.ReasonForbidden, "conversation %s is driven by its project's assistant: %s is written by the node alone; a client sends conversation.user.message, conversation.cancel, conversation.resume or conversation.tool.approval (jido-bus conv send|cancel|approve)", agentID, typ)
}

// AdmitStart refuses, as forbidden, agent.start of a conversation under
// the id of a project of the node: such a conversation is the project's,
// started through it (conv start, conv send) with its assistant's loop
// on, never as one driven from outside whose answers anyone writes.
// Agents of other types are not its concern.
func (s *Service) AdmitStart(r runtime.StartRequest) error {
	if r.Type != conversation.AgentType {
		return nil
	}
	if project, _, ok := cut(r.ID); ok && s.projects.Has(project) {
		return bus.Errorf(bus.ReasonForbidden, "conversation %s is under the id of project %s: its conversations start through it (jido-bus conv start %s, or conv send %s TEXT), driven by its assistant; a conversation your own service drives takes an id no project uses", r.ID, project, project, r.ID)
	}
	return nil
}

// AdmitBroadcast refuses a broadcast of a conversation event: every
// conversation's agent routes them, so one publish would put the same
// event into every conversation (a forged tool call into each the
// assistant drives). Conversation events are sent to one conversation's
// subject.
func (s *Service) AdmitBroadcast(typ string) error {
	if strings.HasPrefix(typ, "conversation.") {
		return bus.Errorf(bus.ReasonForbidden, "%s is a conversation event: send it to one conversation (%s), not to every agent", typ, s.bus.Subjects().Agent("<project>/<conversation>", typ))
	}
	return nil
}
