package natsbus

import "github.com/prometheus/client_golang/prometheus"

// Collectors export the bus's running totals (jido_signals_in_total,
// jido_api_requests_total).
func (b *Bus) Collectors() []prometheus.Collector {
	stat := func(f func(Stats) uint64) func() float64 {
		return func() float64 { return float64(f(b.Stats())) }
	}
	return []prometheus.Collector{
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "jido_signals_in_total", Help: "Signals received on NATS and decoded."}, stat(func(s Stats) uint64 { return s.Received })),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "jido_api_requests_total", Help: "Control-plane requests served."}, stat(func(s Stats) uint64 { return s.APIRequests })),
	}
}
