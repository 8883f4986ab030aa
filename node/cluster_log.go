package node

import (
	"iter"

	"github.com/jido-bus/jido-bus/agents/runtime"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/jido-bus/jido-bus/eventlog/jslog"
	"github.com/jido-bus/jido-bus/eventlog/logapi"
)

// The log verbs (jido.api.log.*) read the log the agents commit to: on a
// single node its own; in cluster mode the replicated log, which holds
// every agent's entries and reads the same on every node, so any node
// may answer. The node's own log then holds only its dead letters, which
// the replicated API refuses to stand in for (logapi.Replicated). A
// truncation is guarded as on one node: the runtime snapshots the agent
// first when this node owns it, and otherwise the cut must be covered by
// the agent's snapshot in the replicated log.

// logAPI is what the log verbs are served from.
func (n *Node) logAPI() logapi.API {
	if n.jslog != nil {
		return logapi.Replicated{Log: n.jslog, Guard: n.guardTruncate, ImportGuard: n.guardImport}
	}
	return logapi.Local{Log: n.evlog, Guard: n.guardTruncate, ImportGuard: n.guardImport}
}

// emitLog is what the verb log.emits reads.
func (n *Node) emitLog() runtime.EmitLog {
	if n.jslog != nil {
		return replicatedEmits{n.jslog}
	}
	return n.evlog
}

// replicatedEmits is the replicated log as log.emits reads it: one
// agent's stream at a time, since the partitions have no order between
// them.
type replicatedEmits struct{ *jslog.Log }

func (r replicatedEmits) ReadAll(eventlog.ReadOptions) iter.Seq2[eventlog.Entry, error] {
	return func(yield func(eventlog.Entry, error) bool) {
		yield(eventlog.Entry{}, bus.Errorf(logapi.ReasonClusterUnsupported,
			"the replicated log has no order across its partitions: name an agent's stream (jido-bus log emits agent/<id>), or subscribe to %s.emit.> for every agent's emits as they happen", r.Prefix()))
	}
}
