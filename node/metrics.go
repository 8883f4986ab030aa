package node

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"runtime/debug"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/jido-bus/jido-bus/agents/runtime"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/conversation"
	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/jido-bus/jido-bus/projects/assistant"
)

// metrics are the node's Prometheus metrics, in a registry of its own:
// its own counts of what it refuses and emits, and the collectors of the
// parts it runs (each beside what it measures).
type metrics struct {
	reg         *prometheus.Registry
	deadLetters *prometheus.CounterVec
	refused     *prometheus.CounterVec
	emitted     atomic.Uint64
	runtime     *runtime.Metrics // set by knowTypes
	spend       *assistant.SpendMetrics
	srv         *http.Server
	ln          net.Listener
	served      chan struct{} // closed when the HTTP server's goroutine ends
}

func newMetrics(version string) *metrics {
	m := &metrics{reg: prometheus.NewRegistry()}
	m.deadLetters = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "jido_dead_letters_total", Help: "Inputs refused and filed on <prefix>.dlq.<reason>, by reason.",
	}, []string{"reason"})
	m.refused = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "jido_signals_refused_total", Help: "Inputs refused, each once, by reason: signals the door, the node or the agent runtime refused before committing them, control-plane requests refused (unreadable, at shutdown, over a limit).",
	}, []string{"reason"})
	emitted := prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "jido_signals_out_total", Help: "Signals agents emitted and lifecycle signals the runtime published.",
	}, func() float64 { return float64(m.emitted.Load()) })
	m.spend = assistant.NewSpendMetrics()
	m.reg.MustRegister(m.deadLetters, m.refused, emitted, buildInfo(version),
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.reg.MustRegister(m.spend.Collectors()...)
	// Every known label starts at zero: a rate or an alert on a reason
	// that has not happened yet has a series to work on.
	for _, r := range refusalReasons {
		m.refused.WithLabelValues(r)
		m.deadLetters.WithLabelValues(r)
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

// knowTypes registers the runtime's metrics, with the series of the
// agent types registered.
func (m *metrics) knowTypes(types []string) {
	m.runtime = runtime.NewMetrics(types)
	m.reg.MustRegister(m.runtime.Collectors()...)
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

// watch registers the collectors of the running parts.
func (m *metrics) watch(n *Node) {
	m.reg.MustRegister(n.bus.Collectors()...)
	m.reg.MustRegister(n.rt.Collector(), n.runner.LagCollector())
}

// Committed and Executed (runtime.Observer) are the runtime's metrics';
// Refused counts every input refused, the runtime's among them.
func (m *metrics) Committed(agentType string, d time.Duration) { m.runtime.Committed(agentType, d) }
func (m *metrics) Executed(kind, outcome string)               { m.runtime.Executed(kind, outcome) }
func (m *metrics) Refused(reason string)                       { m.refused.WithLabelValues(reason).Inc() }

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
