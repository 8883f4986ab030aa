package projections

import "github.com/prometheus/client_golang/prometheus"

// LagCollector exports each projection's entries behind the log's head
// (jido_projection_lag_entries).
func (r *Runner) LagCollector() prometheus.Collector { return projectionLag{r} }

type projectionLag struct{ r *Runner }

var lagDesc = prometheus.NewDesc("jido_projection_lag_entries", "Log entries a projection has not folded yet.", []string{"projection"}, nil)

func (p projectionLag) Describe(ch chan<- *prometheus.Desc) { ch <- lagDesc }

func (p projectionLag) Collect(ch chan<- prometheus.Metric) {
	for _, st := range p.r.Status() {
		ch <- prometheus.MustNewConstMetric(lagDesc, prometheus.GaugeValue, float64(st.Lag), st.Name)
	}
}
