package projects

import (
	"strings"

	"github.com/jido-bus/jido-bus/agents/runtime"
	"github.com/jido-bus/jido-bus/bus"
)

// The engine writes a project's stream alone (its opens, reloads, tool
// calls and closes): it is the project's audit trail. These admissions
// keep the agent API and the signal ingress from writing it too; the node
// asks them before any signal from outside reaches an agent.

// AdmitSignal refuses a signal sent from outside to a project's agent, so
// that a client can neither forge entries of the audit trail nor close a
// project it may not. Conversations, below a project's id, are not
// concerned.
func (e *Engine) AdmitSignal(agentID string) error {
	if strings.Contains(agentID, "/") {
		return nil
	}
	if _, err := e.Get(agentID); err != nil {
		return nil
	}
	return bus.Errorf(bus.ReasonForbidden, "agent %s is a project: its stream is written by the engine alone; use the project API (<prefix>.api.project.<verb>, jido-bus project …)", agentID)
}

// AdmitBroadcast refuses a broadcast of a project signal type: every
// project's agent routes them, so one publish on
// <prefix>.signal.project.stopped would otherwise close every project.
func (e *Engine) AdmitBroadcast(typ string) error {
	if !strings.HasPrefix(typ, TypePrefix) {
		return nil
	}
	return bus.Errorf(bus.ReasonForbidden, "%s is a project signal: project streams are written by the engine alone; use the project API (<prefix>.api.project.<verb>, jido-bus project …)", typ)
}

// AdmitStart refuses agent.start of a project agent. One is started by
// the engine's project open, which checks its root, loads its assets and
// policy and knows it from then on; started directly it would be a
// project without a root that the engine does not guard.
func AdmitStart(r runtime.StartRequest) error {
	if r.Type != AgentType {
		return nil
	}
	return bus.Errorf(bus.ReasonForbidden, "agents of type %s are started by project open (jido-bus project open PATH, <prefix>.api.project.open), which checks the project's root and policy; agent start does not start them", AgentType)
}
