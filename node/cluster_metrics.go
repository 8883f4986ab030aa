package node

import (
	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/codec"
	"github.com/jido-bus/jido-bus/cluster"
)

// watchCluster registers cluster mode's metrics: which partitions this
// node serves, how often they moved, and what the replicated log's
// servers answered beside plain acknowledgements.
func (m *metrics) watchCluster(n *Node) *prometheus.CounterVec {
	moves := cluster.MoveCounter()
	m.reg.MustRegister(moves, n.rt.PartitionsCollector(n.cfg.Cluster.partitions()), n.jslog.Collector())
	return moves
}

// TypePartitionMoved is the lifecycle signal a node publishes when a
// partition's owner changes by its hand, on <prefix>.emit.cluster.<type>.
const TypePartitionMoved = "jido.cluster.partition.moved"

// onMove counts a move and publishes it as a lifecycle signal.
func (n *Node) onMove(moves *prometheus.CounterVec, mv cluster.Move) {
	moves.WithLabelValues(string(mv.Reason)).Inc()
	sig, err := bus.NewSignal(TypePartitionMoved, "jido-bus/cluster/"+n.cfg.Cluster.NodeID, map[string]any{
		"partition": mv.Partition, "from": mv.From, "to": mv.To, "epoch": mv.Epoch, "reason": mv.Reason,
	})
	if err == nil {
		var msg *nats.Msg
		if msg, err = codec.Encode(n.subjects.Emit("cluster", TypePartitionMoved), &sig, codec.Binary); err == nil {
			err = n.conn.nc.PublishMsg(msg)
		}
	}
	if err != nil {
		n.log.Warn("publish a partition's move", "partition", mv.Partition, "err", err)
	}
}
