package cluster

import "github.com/prometheus/client_golang/prometheus"

// MoveCounter counts the changes of a partition's owner a node made or
// suffered, by reason (jido_cluster_partition_moves_total), every reason
// at zero: an alert on failovers has a series before the first one.
func MoveCounter() *prometheus.CounterVec {
	moves := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "jido_cluster_partition_moves_total",
		Help: "Changes of a partition's owner this node made or suffered, by reason (taken, failover, adopted, hand-over, leave, acquire-failed, fenced, lost).",
	}, []string{"reason"})
	for _, r := range []MoveReason{MoveTaken, MoveFailover, MoveAdopted, MoveHandOver, MoveLeave, MoveAcquireFailed, MoveFenced, MoveLost} {
		moves.WithLabelValues(string(r))
	}
	return moves
}
