package runtime

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/jido-bus/jido-bus/agents"
)

// Metrics counts what a runtime commits and executes (jido_commit_seconds,
// jido_directives_total); it is the Committed and Executed half of an
// Observer, the refusals being counted by whoever counts every input's.
type Metrics struct {
	commitLatency *prometheus.HistogramVec
	directives    *prometheus.CounterVec
}

// directiveKinds and directiveOutcomes are the labels of
// jido_directives_total known in advance: the built-in kinds (custom ones
// appear when they first run) and every outcome.
var (
	directiveKinds = []string{
		agents.KindEmit, agents.KindError, agents.KindSpawnAgent, agents.KindStopChild, agents.KindSchedule,
		agents.KindScheduleCancel, agents.KindCron, agents.KindCronCancel, agents.KindRunInstruction, agents.KindStop,
	}
	directiveOutcomes = []string{OutcomeOK, OutcomeAsync, OutcomeStop, OutcomeFailed, OutcomeDropped, OutcomeUnknown}
)

// NewMetrics returns the metrics with every known label at zero, the
// agent types' included: a rate or an alert on a label that has not
// happened yet has a series to work on.
func NewMetrics(types []string) *Metrics {
	m := &Metrics{
		commitLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "jido_commit_seconds", Help: "Time to commit one decision (signal, directives, version) durably to the log, by agent type.",
			Buckets: prometheus.ExponentialBuckets(50e-6, 2, 16),
		}, []string{"agent_type"}),
		directives: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "jido_directives_total", Help: "Directive executions by kind and outcome (ok, async, stop, failed, dropped, unknown).",
		}, []string{"kind", "outcome"}),
	}
	for _, t := range types {
		m.commitLatency.WithLabelValues(t)
	}
	for _, k := range directiveKinds {
		for _, o := range directiveOutcomes {
			m.directives.WithLabelValues(k, o)
		}
	}
	return m
}

// Committed is Observer.Committed.
func (m *Metrics) Committed(agentType string, d time.Duration) {
	m.commitLatency.WithLabelValues(agentType).Observe(d.Seconds())
}

// Executed is Observer.Executed.
func (m *Metrics) Executed(kind, outcome string) { m.directives.WithLabelValues(kind, outcome).Inc() }

// Collectors are the metrics to register.
func (m *Metrics) Collectors() []prometheus.Collector {
	return []prometheus.Collector{m.commitLatency, m.directives}
}

// Commits is how many decisions were committed.
func (m *Metrics) Commits() uint64 { return total(m.commitLatency, nil) }

// Directives is how many directives ran, and how many of them failed.
func (m *Metrics) Directives() (ran, failed uint64) {
	isFailed := func(d *dto.Metric) bool {
		for _, l := range d.GetLabel() {
			if l.GetName() == "outcome" {
				return l.GetValue() == OutcomeFailed
			}
		}
		return false
	}
	return total(m.directives, nil), total(m.directives, isFailed)
}

// total sums a collector's counts (a histogram's samples) over the
// series keep keeps (all when keep is nil).
func total(c prometheus.Collector, keep func(*dto.Metric) bool) (sum uint64) {
	ch := make(chan prometheus.Metric)
	go func() { c.Collect(ch); close(ch) }()
	for m := range ch {
		var d dto.Metric
		if m.Write(&d) != nil || (keep != nil && !keep(&d)) {
			continue
		}
		sum += uint64(d.GetCounter().GetValue()) + d.GetHistogram().GetSampleCount()
	}
	return sum
}

// Collector exports the runtime's counts as gauges (jido_agents_active,
// …_passive, …_failed_recovery, jido_queue_depth).
func (rt *Runtime) Collector() prometheus.Collector {
	counts := func(f func(Counts) int) func() float64 {
		return func() float64 { return float64(f(rt.Counts())) }
	}
	return collectors{
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "jido_agents_active", Help: "Agents with their state in memory."}, counts(func(c Counts) int { return c.Active })),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "jido_agents_passive", Help: "Agents kept as an index entry only, until their next signal."}, counts(func(c Counts) int { return c.Passive })),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "jido_agents_failed_recovery", Help: "Agents that failed at recovery, listed as failed until stopped."}, counts(func(c Counts) int { return c.Failed })),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "jido_queue_depth", Help: "Signals and directives waiting, over all active agents."}, counts(func(c Counts) int { return c.Queued })),
	}
}

var servedDesc = prometheus.NewDesc("jido_cluster_partition_served",
	"1 for each partition this node decides for now, 0 for the others.", []string{"partition"}, nil)

// PartitionsCollector exports, for each of the p partitions, whether the
// runtime serves it (jido_cluster_partition_served).
func (rt *Runtime) PartitionsCollector(p int) prometheus.Collector { return served{rt, p} }

type served struct {
	rt *Runtime
	p  int
}

func (s served) Describe(ch chan<- *prometheus.Desc) { ch <- servedDesc }

func (s served) Collect(ch chan<- prometheus.Metric) {
	for p := range s.p {
		v := 0.0
		if s.rt.Serves(p) {
			v = 1
		}
		ch <- prometheus.MustNewConstMetric(servedDesc, prometheus.GaugeValue, v, strconv.Itoa(p))
	}
}

// collectors is several collectors registered as one.
type collectors []prometheus.Collector

func (cs collectors) Describe(ch chan<- *prometheus.Desc) {
	for _, c := range cs {
		c.Describe(ch)
	}
}

func (cs collectors) Collect(ch chan<- prometheus.Metric) {
	for _, c := range cs {
		c.Collect(ch)
	}
}
