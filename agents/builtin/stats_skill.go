package builtin

import (
	"encoding/json"

	"github.com/jido-bus/jido-bus/agents"
)

// StatsSkill returns the stats skill: it keeps the last config.window
// (default 10) values recorded with stats.record {value}, their count and
// their mean, as state {recent, count, mean}; stats.reset clears it.
func StatsSkill() agents.Skill {
	type sample struct {
		Value float64 `json:"value"`
	}
	return agents.Skill{
		Name:        "stats",
		StateKey:    "stats",
		Description: "A window of recent results and their mean.",
		Category:    "math",
		Vsn:         "1.0.0",
		Tags:        []string{"math", "example"},
		Schema: `{
		  "type": "object",
		  "properties": {
		    "recent": {"type": "array", "items": {"type": "number"}, "default": []},
		    "count": {"type": "integer", "minimum": 0, "default": 0, "description": "values recorded since the last reset"},
		    "mean": {"type": "number", "default": 0, "description": "mean of recent"}
		  },
		  "required": ["recent", "count", "mean"]
		}`,
		ConfigSchema: `{
		  "type": "object",
		  "properties": {"window": {"type": "integer", "minimum": 1, "default": 10, "description": "how many recent values to keep"}},
		  "additionalProperties": false
		}`,
		SignalPatterns: []string{"stats.*"},
		Actions: []agents.Action{
			{
				Name: "record", Description: "Record one value.",
				Params: `{"type": "object", "properties": {"value": {"type": "number"}}, "required": ["value"], "additionalProperties": false}`,
				Run: agents.Typed(func(env agents.Env, p sample) (agents.Result, error) {
					window := int(env.Config["window"].(float64))
					old := env.State.List("recent")
					recent := make([]any, 0, window)
					if skip := len(old) + 1 - window; skip > 0 {
						old = old[skip:]
					}
					recent = append(append(recent, old...), p.Value)
					sum := 0.0
					for _, v := range recent {
						sum += v.(float64)
					}
					return agents.Result{Ops: []agents.StateOp{agents.Set{Values: map[string]any{
						"recent": recent,
						"count":  env.State.Number("count") + 1,
						"mean":   sum / float64(len(recent)),
					}}}}, nil
				}),
			},
			{
				Name: "reset", Description: "Forget every value.", Params: `{"type": "object", "additionalProperties": false}`,
				Run: func(agents.Env, json.RawMessage) (agents.Result, error) {
					return agents.Result{State: agents.State{"recent": []any{}, "count": 0, "mean": 0}}, nil
				},
			},
		},
		Routes: []agents.Route{
			{Pattern: "stats.record", Action: "record"},
			{Pattern: "stats.reset", Action: "reset"},
		},
	}
}
