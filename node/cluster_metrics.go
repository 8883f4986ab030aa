package node

import (
	"github.com/prometheus/client_golang/prometheus"

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
