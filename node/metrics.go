package node

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/jido-bus/jido-bus/agents"
	"github.com/jido-bus/jido-bus/agents/runtime"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/natsbus"
	"github.com/jido-bus/jido-bus/conversation"
	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/jido-bus/jido-bus/projects/assistant/llm"
)

// metrics are the node's Prometheus metrics, in a registry of its own.
type metrics struct {
	reg           *prometheus.Registry
	deadLetters   *prometheus.CounterVec
	refused       *prometheus.CounterVec
	emitted       prometheus.Counter
	commitLatency *prometheus.HistogramVec
	directives    *prometheus.CounterVec
	llmTokens     *prometheus.CounterVec
	llmCost       *prometheus.CounterVec
	srv           *http.Server
	ln            net.Listener
	served        chan struct{} // closed when the HTTP server's goroutine ends
}

func newMetrics(version string) *metrics {
	m := &metrics{reg: prometheus.NewRegistry()}
	m.deadLetters = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "jido_dead_letters_total", Help: "Inputs refused and filed on <prefix>.dlq.<reason>, by reason.",
	}, []string{"reason"})
	m.refused = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "jido_signals_refused_total", Help: "Inputs refused, each once, by reason: signals the door, the node or the agent runtime refused before committing them, control-plane requests refused (unreadable, at shutdown, over a limit).",
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
	m.llmTokens = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "jido_llm_tokens_total", Help: "Tokens of the conversations' completed LLM calls as their providers reported them, by project, model and direction (input, output).",
	}, []string{"project", "model", "direction"})
	m.llmCost = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "jido_llm_cost_usd_total", Help: "USD the conversations' completed LLM calls cost by the operator's price table (providers: prices), by project and model; calls of a model without a price are not counted.",
	}, []string{"project", "model"})
	m.reg.MustRegister(m.deadLetters, m.refused, m.emitted, m.commitLatency, m.directives, m.llmTokens, m.llmCost, buildInfo(version),
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	// Every known label starts at zero: a rate or an alert on a reason
	// that has not happened yet has a series to work on.
	for _, r := range refusalReasons {
		m.refused.WithLabelValues(r)
		m.deadLetters.WithLabelValues(r)
	}
	for _, k := range directiveKinds {
		for _, o := range directiveOutcomes {
			m.directives.WithLabelValues(k, o)
		}
	}
	return m
}

// refusalReasons are the reasons an input is known to be refused for:
// every reason word of the bus, and those of the runtime and of the
// conversation agent that refuse a signal before its commit.
var refusalReasons = []string{
	bus.ReasonMissingAttribute, bus.ReasonInvalidAttribute, bus.ReasonInvalidSpecVersion,
	bus.ReasonInvalidType, bus.ReasonTypeMismatch, bus.ReasonMalformed, bus.ReasonTooLarge,
	bus.ReasonInvalidAgentID, bus.ReasonInvalidPattern, bus.ReasonInvalidSubject, bus.ReasonInvalidStream,
	bus.ReasonInvalidRequest, bus.ReasonNotFound, bus.ReasonQueueOverflow,
	bus.ReasonUnavailable, bus.ReasonInternal, bus.ReasonForbidden,
	runtime.ReasonStopped, runtime.ReasonAgentFailed, runtime.ReasonClosed,
	conversation.ReasonInvalidEvent, conversation.ReasonUnknownEvent, conversation.ReasonTransientEvent,
}

// directiveKinds and directiveOutcomes are the labels of
// jido_directives_total known in advance: the built-in kinds (custom ones
// appear when they first run) and every outcome.
var (
	directiveKinds = []string{
		agents.KindEmit, agents.KindError, agents.KindSpawnAgent, agents.KindStopChild, agents.KindSchedule,
		agents.KindScheduleCancel, agents.KindCron, agents.KindCronCancel, agents.KindRunInstruction, agents.KindStop,
	}
	directiveOutcomes = []string{
		runtime.OutcomeOK, runtime.OutcomeAsync, runtime.OutcomeStop, runtime.OutcomeFailed,
		runtime.OutcomeDropped, runtime.OutcomeUnknown,
	}
)

// knowTypes starts the per-type series of the agent types registered.
func (m *metrics) knowTypes(types []string) {
	for _, t := range types {
		m.commitLatency.WithLabelValues(t)
	}
}

// buildInfo is jido_build_info: 1, labelled with what this build is.
func buildInfo(version string) prometheus.Collector {
	commit, goVersion := "unknown", "unknown"
	if bi, ok := debug.ReadBuildInfo(); ok {
		goVersion = bi.GoVersion
		var modified bool
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				commit = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
		if modified && commit != "unknown" {
			commit += "-dirty"
		}
	}
	if version == "" {
		version = "unknown"
	}
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "jido_build_info",
		Help: "1, labelled with the build: its version, VCS commit, Go version and the event log's format version.",
		ConstLabels: prometheus.Labels{
			"version": version, "commit": commit, "go": goVersion,
			"log_format": strconv.Itoa(eventlog.FormatVersion),
		},
	})
	g.Set(1)
	return g
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

// spent counts one completed LLM call of a project's conversation
// (assistant.Config.Spent).
func (m *metrics) spent(project, model string, u llm.Usage, costUSD float64, priced bool) {
	// A counter panics on a negative amount: a model server reporting
	// negative usage must not take the node down (its event is refused by
	// the schema of conversation.llm.completed anyway).
	m.llmTokens.WithLabelValues(project, model, "input").Add(float64(max(u.InputTokens, 0)))
	m.llmTokens.WithLabelValues(project, model, "output").Add(float64(max(u.OutputTokens, 0)))
	if priced {
		m.llmCost.WithLabelValues(project, model).Add(max(costUSD, 0))
	}
}

// serve exposes the registry on http://addr/metrics, and /healthz and
// /readyz (see healthHandlers) answered from ready.
func (m *metrics) serve(addr string, ready func() readiness) (string, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("metrics: listen on %s: %w (choose another --metrics address)", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg}))
	healthHandlers(mux, ready)
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
