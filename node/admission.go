package node

import (
	"github.com/jido-bus/jido-bus/agents/runtime"
	"github.com/jido-bus/jido-bus/projects"
)

// The agent API and the signal ingress (agentapi) ask these before a
// signal from outside reaches an agent; each concern owns its rule, the
// node only puts them together. The runtime's own types are refused by
// agentapi before any of them is asked.

// admitSignal admits a call, cast (typ set) or stop (typ empty) to agent
// id: a conversation's node-written events are refused, and a project's
// agent takes nothing from outside.
func (n *Node) admitSignal(id, typ string) error {
	if typ != "" {
		if err := n.conv.Admit(id, typ); err != nil {
			return err
		}
	}
	return n.projects.AdmitSignal(id)
}

// admitBroadcast refuses a broadcast of a project signal or of a
// conversation event: every project's or conversation's agent routes
// them, so one publish would close every project or put the same event
// into every conversation.
func (n *Node) admitBroadcast(typ string) error {
	if err := n.projects.AdmitBroadcast(typ); err != nil {
		return err
	}
	return n.conv.AdmitBroadcast(typ)
}

// admitStart refuses agent.start of a project, and of a conversation under
// the id of a project of the node (convapi's AdmitStart).
func (n *Node) admitStart(r runtime.StartRequest) error {
	if err := projects.AdmitStart(r); err != nil {
		return err
	}
	return n.conv.AdmitStart(r)
}
