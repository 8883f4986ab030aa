package assistant

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/jido-bus/jido-bus/projects/assistant/llm"
)

// SpendMetrics count the conversations' completed LLM calls
// (jido_llm_tokens_total, jido_llm_cost_usd_total); Spent is Config.Spent.
type SpendMetrics struct{ tokens, cost *prometheus.CounterVec }

// NewSpendMetrics returns the metrics, with no series yet.
func NewSpendMetrics() *SpendMetrics {
	return &SpendMetrics{
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "jido_llm_tokens_total", Help: "Tokens of the conversations' completed LLM calls as their providers reported them, by project, model and direction (input, output).",
		}, []string{"project", "model", "direction"}),
		cost: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "jido_llm_cost_usd_total", Help: "USD the conversations' completed LLM calls cost by the operator's price table (providers: prices), by project and model; calls of a model without a price are not counted.",
		}, []string{"project", "model"}),
	}
}

// Collectors are the metrics to register.
func (m *SpendMetrics) Collectors() []prometheus.Collector {
	return []prometheus.Collector{m.tokens, m.cost}
}

// Spent counts one completed LLM call of a project's conversation.
func (m *SpendMetrics) Spent(project, model string, u llm.Usage, costUSD float64, priced bool) {
	// A counter panics on a negative amount: a model server reporting
	// negative usage must not take the node down (its event is refused by
	// the schema of conversation.llm.completed anyway).
	m.tokens.WithLabelValues(project, model, "input").Add(float64(max(u.InputTokens, 0)))
	m.tokens.WithLabelValues(project, model, "output").Add(float64(max(u.OutputTokens, 0)))
	if priced {
		m.cost.WithLabelValues(project, model).Add(max(costUSD, 0))
	}
}
