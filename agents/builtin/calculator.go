package builtin

import "github.com/jido-bus/jido-bus/agents"

// NewCalculator returns the calculator agent type: the calculator skill
// (precision 2) reporting each result to the stats skill (window 10), so
// state is {"calculator": {"last_result"}, "stats": {"recent", "count",
// "mean"}}. Signals: calculator.add|subtract|multiply|divide {a, b},
// stats.record {value}, stats.reset.
func NewCalculator() (*agents.Definition, error) {
	return agents.Define(agents.Spec{
		Name:        "calculator",
		Description: "Arithmetic with a running window of results (the calculator and stats skills).",
		Skills: []agents.Attachment{
			agents.Use(CalculatorSkill(), map[string]any{"precision": 2, "report_to": "stats.record"}),
			agents.Use(StatsSkill(), map[string]any{"window": 10}),
		},
	})
}
