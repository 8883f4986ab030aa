package agentapi

import (
	"encoding/json"
	"strings"

	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/agents/runtime"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/natsbus"
	"github.com/jido-bus/jido-bus/eventlog/jslog"
)

// Partitioner routes input by the partition of the agent it is for: a
// signal by its subject's agent id, an agent verb by its request's id;
// of is the partition of an agent's stream, serves whether this node
// decides for a partition now.
func Partitioner(subjects bus.Subjects, of func(stream string) int, serves func(p int) bool) *natsbus.Partitioner {
	byID := map[string]bool{}
	for _, verb := range []string{VerbStart, VerbStop, VerbState, VerbWhereis, VerbCall, VerbCast, VerbAwait} {
		byID[subjects.API("agent", verb)] = true
	}
	agentPrefix := subjects.Name() + ".agent."
	return &natsbus.Partitioner{
		Of: func(msg *nats.Msg) (int, bool) {
			var id string
			switch {
			case strings.HasPrefix(msg.Subject, agentPrefix):
				addr, err := subjects.Parse(msg.Subject)
				if err != nil {
					return 0, false // refused where it arrived
				}
				id = addr.AgentID
			case byID[msg.Subject]:
				var req struct {
					ID string `json:"id"`
				}
				if json.Unmarshal(msg.Data, &req) != nil || bus.ValidateAgentID(req.ID) != nil {
					return 0, false // no id (a start picks one here) or bad input, answered here
				}
				id = req.ID
			default:
				return 0, false
			}
			return of("agent/" + id), true
		},
		Serves: serves,
	}
}

// LogPartitions divides the agents by the replicated log's p partitions
// (eventlog/jslog), for runtime.Config.Partitions.
func LogPartitions(p int) *runtime.Partitions {
	return &runtime.Partitions{Of: func(stream string) int { return jslog.Partition(stream, p) }, Index: jslog.IndexStream}
}
