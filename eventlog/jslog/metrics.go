package jslog

import "github.com/prometheus/client_golang/prometheus"

var (
	fencedDesc = prometheus.NewDesc("jido_cluster_commits_fenced_total",
		"Commits the NATS servers refused because another writer had moved the agent's subject on (a stale owner, or a retry).", nil, nil)
	duplicateDesc = prometheus.NewDesc("jido_cluster_commits_duplicate_total",
		"Commits the NATS servers answered as already stored under their Msg-Id (a retry after a lost acknowledgement).", nil, nil)
)

// Collector exports the Log's Stats: what the servers answered beside
// plain acknowledgements.
func (l *Log) Collector() prometheus.Collector { return statsCollector{l} }

type statsCollector struct{ l *Log }

func (c statsCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- fencedDesc
	ch <- duplicateDesc
}

func (c statsCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.l.Stats()
	ch <- prometheus.MustNewConstMetric(fencedDesc, prometheus.CounterValue, float64(s.Fenced))
	ch <- prometheus.MustNewConstMetric(duplicateDesc, prometheus.CounterValue, float64(s.Duplicates))
}
