package cluster

import (
	"log/slog"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/codec"
)

// TypePartitionMoved is the lifecycle signal a node publishes when a
// partition's owner changes by its hand, on <prefix>.emit.cluster.<type>.
const TypePartitionMoved = "jido.cluster.partition.moved"

// Announce returns an OnMove that counts each move in moves and publishes
// it as a lifecycle signal from nodeID.
func Announce(nc *nats.Conn, subjects bus.Subjects, nodeID string, moves *prometheus.CounterVec, log *slog.Logger) func(Move) {
	return func(mv Move) { announce(nc, subjects, nodeID, moves, log, mv) }
}

func announce(nc *nats.Conn, subjects bus.Subjects, nodeID string, moves *prometheus.CounterVec, log *slog.Logger, mv Move) {
	moves.WithLabelValues(string(mv.Reason)).Inc()
	sig, err := bus.NewSignal(TypePartitionMoved, "jido-bus/cluster/"+nodeID, map[string]any{
		"partition": mv.Partition, "from": mv.From, "to": mv.To, "epoch": mv.Epoch, "reason": mv.Reason,
	})
	if err == nil {
		var msg *nats.Msg
		if msg, err = codec.Encode(subjects.Emit("cluster", TypePartitionMoved), &sig, codec.Binary); err == nil {
			err = nc.PublishMsg(msg)
		}
	}
	if err != nil {
		log.Warn("publish a partition's move", "partition", mv.Partition, "err", err)
	}
}
