package emitapi

import (
	"iter"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/jido-bus/jido-bus/eventlog/jslog"
	"github.com/jido-bus/jido-bus/eventlog/logapi"
)

// Replicated is the replicated log as log.emits reads it: one
// agent's stream at a time, since the partitions have no order between
// them.
type Replicated struct{ *jslog.Log }

func (r Replicated) ReadAll(eventlog.ReadOptions) iter.Seq2[eventlog.Entry, error] {
	return func(yield func(eventlog.Entry, error) bool) {
		yield(eventlog.Entry{}, bus.Errorf(logapi.ReasonClusterUnsupported,
			"the replicated log has no order across its partitions: name an agent's stream (jido-bus log emits agent/<id>), or subscribe to %s.emit.> for every agent's emits as they happen", r.Prefix()))
	}
}
