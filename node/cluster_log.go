package node

import (
	"github.com/jido-bus/jido-bus/agents/runtime"
	"github.com/jido-bus/jido-bus/agents/runtime/agentapi"
	"github.com/jido-bus/jido-bus/agents/runtime/emitapi"
	"github.com/jido-bus/jido-bus/eventlog/logapi"
)

// The log verbs (jido.api.log.*) read the log the agents commit to: on a
// single node its own; in cluster mode the replicated log, which holds
// every agent's entries and reads the same on every node, so any node
// may answer. The node's own log then holds only its dead letters, which
// the replicated API refuses to stand in for (logapi.Replicated), as it
// refuses truncation: the runtime's guard (snapshot the agent first) is
// for the node's own log only.

// logAPI is what the log verbs are served from.
func (n *Node) logAPI() logapi.API {
	if n.jslog != nil {
		return logapi.Replicated{Log: n.jslog, ImportGuard: agentapi.GuardImport}
	}
	return logapi.Local{Log: n.evlog, Guard: agentapi.GuardTruncate(n.rt), ImportGuard: agentapi.GuardImport}
}

// emitLog is what the verb log.emits reads.
func (n *Node) emitLog() runtime.EmitLog {
	if n.jslog != nil {
		return emitapi.Replicated{Log: n.jslog}
	}
	return n.evlog
}
