package node

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/jido-bus/jido-bus/agents/runtime"
	"github.com/jido-bus/jido-bus/bus/natsbus"
)

// metrics are the node's Prometheus metrics, in a registry of its own.
type metrics struct {
	reg           *prometheus.Registry
	deadLetters   *prometheus.CounterVec
	refused       *prometheus.CounterVec
	emitted       prometheus.Counter
	commitLatency *prometheus.HistogramVec
	directives    *prometheus.CounterVec
	srv           *http.Server
	ln            net.Listener
	served        chan struct{} // closed when the HTTP server's goroutine ends
}

func newMetrics() *metrics {
	m := &metrics{reg: prometheus.NewRegistry()}
	m.deadLetters = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "jido_dead_letters_total", Help: "Inputs refused and filed on <prefix>.dlq.<reason>, by reason.",
	}, []string{"reason"})
	m.refused = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "jido_signals_refused_total", Help: "Signals the agent runtime refused before committing them, by reason (queue_overflow, not_found, …).",
	}, []string{"reason"})
	m.emitted = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "jido_signals_out_total", Help: "Signals agents emitted and lifecycle signals the runtime published.",
	})
	m.commitLatency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "jido_commit_seconds", Help: "Time to commit one decision (signal, directives, version) durably to the log, by agent type.",
		Buckets: prometheus.ExponentialBuckets(50e-6, 2, 16),
	}, []string{"agent_type"})
	m.directives = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "jido_directives_total", Help: "Directive executions by kind and outcome (ok, async, stop, failed, dropped, unknown).",
	}, []string{"kind", "outcome"})
	m.reg.MustRegister(m.deadLetters, m.refused, m.emitted, m.commitLatency, m.directives,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// watch adds the gauges and counters read from the running parts.
func (m *metrics) watch(n *Node) {
	stat := func(f func(natsbus.Stats) uint64) func() float64 {
		return func() float64 { return float64(f(n.bus.Stats())) }
	}
	counts := func(f func(runtime.Counts) int) func() float64 {
		return func() float64 { return float64(f(n.rt.Counts())) }
	}
	m.reg.MustRegister(
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "jido_signals_in_total", Help: "Signals received on NATS and decoded."}, stat(func(s natsbus.Stats) uint64 { return s.Received })),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "jido_api_requests_total", Help: "Control-plane requests served."}, stat(func(s natsbus.Stats) uint64 { return s.APIRequests })),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "jido_agents_active", Help: "Agents with their state in memory."}, counts(func(c runtime.Counts) int { return c.Active })),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "jido_agents_passive", Help: "Agents kept as an index entry only, until their next signal."}, counts(func(c runtime.Counts) int { return c.Passive })),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "jido_agents_failed_recovery", Help: "Agents that failed at recovery, listed as failed until stopped."}, counts(func(c runtime.Counts) int { return c.Failed })),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "jido_queue_depth", Help: "Signals and directives waiting, over all active agents."}, counts(func(c runtime.Counts) int { return c.Queued })),
		projectionLag{n},
	)
}

// projectionLag reports each projection's entries behind the log's head.
type projectionLag struct{ n *Node }

var lagDesc = prometheus.NewDesc("jido_projection_lag_entries", "Log entries a projection has not folded yet.", []string{"projection"}, nil)

func (p projectionLag) Describe(ch chan<- *prometheus.Desc) { ch <- lagDesc }

func (p projectionLag) Collect(ch chan<- prometheus.Metric) {
	for _, st := range p.n.runner.Status() {
		ch <- prometheus.MustNewConstMetric(lagDesc, prometheus.GaugeValue, float64(st.Lag), st.Name)
	}
}

// runtime.Observer
func (m *metrics) Committed(agentType string, d time.Duration) {
	m.commitLatency.WithLabelValues(agentType).Observe(d.Seconds())
}
func (m *metrics) Executed(kind, outcome string) { m.directives.WithLabelValues(kind, outcome).Inc() }
func (m *metrics) Refused(reason string)         { m.refused.WithLabelValues(reason).Inc() }

// serve exposes the registry on http://addr/metrics.
func (m *metrics) serve(addr string) (string, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("metrics: listen on %s: %w (choose another --metrics address)", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg}))
	m.ln = ln
	m.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	m.served = make(chan struct{})
	go func() {
		defer close(m.served)
		// Serve returns ErrServerClosed once close shuts it down, or the
		// listener's error, which leaves nothing to do either way.
		_ = m.srv.Serve(ln)
	}()
	return "http://" + ln.Addr().String() + "/metrics", nil
}

func (m *metrics) close() error {
	if m.srv == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := m.srv.Shutdown(ctx)
	<-m.served
	return err
}
