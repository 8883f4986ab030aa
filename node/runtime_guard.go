package node

import (
	"strings"

	"github.com/jido-bus/jido-bus/agents/runtime"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/projects"
)

// runtimeTypePrefix starts every signal type the runtime itself writes or
// delivers: its records (jido.agent.started, .cmd, .effects, .stopped, the
// agent index), the lifecycle signals it hands to agents
// (jido.agent.child.exit, jido.agent.instruction.result, jido.cron_tick,
// …) and dead letters (jido.deadletter).
const runtimeTypePrefix = "jido."

// runtimeSignal refuses, as forbidden, a signal of the runtime's own types
// sent from outside. Committed to an agent's stream like any signal, a
// forged jido.agent.stopped makes the agent fail at the next start, a
// forged jido.agent.instruction.result runs any of its actions with the
// sender's params (it bypasses the routes), and a forged child exit,
// task result or timer tick makes the agent act on something that never
// happened. Only the runtime produces them, in process.
func runtimeSignal(typ string) error {
	if !strings.HasPrefix(typ, runtimeTypePrefix) {
		return nil
	}
	return bus.Errorf(bus.ReasonForbidden, "%s is a signal type of the runtime's own (types starting with %q: its records, lifecycle signals, task results and timer ticks): only the node produces them; send your agents types of your own", typ, runtimeTypePrefix)
}

// admitSignal is the agent API's admission of a call, cast (typ set) or
// stop (typ empty) to agent id: the runtime's types and a conversation's
// node-written events are refused, and a project's agent takes nothing
// from outside.
func (n *Node) admitSignal(id, typ string) error {
	if typ != "" {
		if err := runtimeSignal(typ); err != nil {
			return err
		}
		if err := n.conv.Admit(id, typ); err != nil {
			return err
		}
	}
	return n.projectSignal(id)
}

// admitStart refuses agent.start of a project, and of a conversation under
// the id of a project of the node (convapi's AdmitStart). A project
// agent is started by the engine's project.open, which checks its root,
// loads its assets and policy and knows it from then on; started directly
// it would be a project without a root that the engine does not guard.
func (n *Node) admitStart(r runtime.StartRequest) error {
	if r.Type == projects.AgentType {
		return bus.Errorf(bus.ReasonForbidden, "agents of type %s are started by project open (jido-bus project open PATH, %s), which checks the project's root and policy; agent start does not start them", projects.AgentType, n.subjects.API("project", "open"))
	}
	return n.conv.AdmitStart(r)
}
