package node

import (
	"strconv"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/codec"
	"github.com/jido-bus/jido-bus/cluster"
)

// clusterMetrics are cluster mode's metrics: which partitions this node
// serves, how often they moved, and what the replicated log's servers
// answered beside plain acknowledgements.
type clusterMetrics struct {
	n     *Node
	moves *prometheus.CounterVec
}

var (
	servedDesc = prometheus.NewDesc("jido_cluster_partition_served",
		"1 for each partition this node decides for now, 0 for the others.", []string{"partition"}, nil)
	fencedDesc = prometheus.NewDesc("jido_cluster_commits_fenced_total",
		"Commits the NATS servers refused because another writer had moved the agent's subject on (a stale owner, or a retry).", nil, nil)
	duplicateDesc = prometheus.NewDesc("jido_cluster_commits_duplicate_total",
		"Commits the NATS servers answered as already stored under their Msg-Id (a retry after a lost acknowledgement).", nil, nil)
)

// watchCluster registers cluster mode's metrics.
func (m *metrics) watchCluster(n *Node) *prometheus.CounterVec {
	moves := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "jido_cluster_partition_moves_total",
		Help: "Changes of a partition's owner this node made or suffered, by reason (taken, failover, adopted, hand-over, leave, acquire-failed, fenced, lost).",
	}, []string{"reason"})
	for _, r := range []cluster.MoveReason{cluster.MoveTaken, cluster.MoveFailover, cluster.MoveAdopted, cluster.MoveHandOver, cluster.MoveLeave, cluster.MoveAcquireFailed, cluster.MoveFenced, cluster.MoveLost} {
		moves.WithLabelValues(string(r))
	}
	m.reg.MustRegister(moves, clusterMetrics{n: n, moves: moves})
	return moves
}

func (c clusterMetrics) Describe(ch chan<- *prometheus.Desc) {
	ch <- servedDesc
	ch <- fencedDesc
	ch <- duplicateDesc
}

func (c clusterMetrics) Collect(ch chan<- prometheus.Metric) {
	for p := range c.n.cfg.Cluster.partitions() {
		v := 0.0
		if c.n.rt.Serves(p) {
			v = 1
		}
		ch <- prometheus.MustNewConstMetric(servedDesc, prometheus.GaugeValue, v, strconv.Itoa(p))
	}
	s := c.n.jslog.Stats()
	ch <- prometheus.MustNewConstMetric(fencedDesc, prometheus.CounterValue, float64(s.Fenced))
	ch <- prometheus.MustNewConstMetric(duplicateDesc, prometheus.CounterValue, float64(s.Duplicates))
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
