package builtin

import (
	"encoding/json"
	"math"
	"strings"

	"github.com/jido-bus/jido-bus/agents"
)

// CalculatorResult is the signal type the calculator skill emits after each
// operation: {"operation": "add", "a": 1, "b": 2, "result": 3}. Under an
// alias the first segment is the alias ("precise.result").
const CalculatorResult = "calculator.result"

const operandsParams = `{
  "type": "object",
  "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
  "required": ["a", "b"],
  "additionalProperties": false
}`

// CalculatorSkill returns the calculator skill: add, subtract, multiply
// and divide on params {a, b}, results rounded to config.precision decimal
// places and kept as state {last_result}. With config.report_to set to an
// action name (the calculator agent uses "stats.record"), each result is
// also passed on as {"value": result}. Division by zero is an error of type
// division_by_zero, not a panic.
func CalculatorSkill() agents.Skill {
	op := func(name, desc string, f func(a, b float64) (float64, error)) agents.Action {
		type operands struct{ A, B float64 }
		return agents.Action{
			Name: name, Description: desc, Params: operandsParams,
			Run: agents.Typed(func(env agents.Env, p operands) (agents.Result, error) {
				r, err := f(p.A, p.B)
				if err != nil {
					return agents.Result{}, err
				}
				r = round(r, int(env.Config["precision"].(float64)))
				if math.IsInf(r, 0) || math.IsNaN(r) {
					return agents.Result{}, agents.Fail("out_of_range", "%s(%v, %v) is out of range", name, p.A, p.B)
				}
				// Under an alias the result is <alias>.result, like the routes.
				prefix, _, _ := strings.Cut(env.Action, ".")
				emit, err := agents.NewEmit(prefix+".result", map[string]any{"operation": name, "a": p.A, "b": p.B, "result": r})
				if err != nil {
					return agents.Result{}, err
				}
				res := agents.Result{
					Ops:        []agents.StateOp{agents.SetPath{Path: []string{"last_result"}, Value: r}},
					Directives: []agents.Directive{emit},
				}
				if to, _ := env.Config["report_to"].(string); to != "" {
					params, _ := json.Marshal(map[string]float64{"value": r})
					res.Then = []agents.Instruction{{Action: to, Params: params}}
				}
				return res, nil
			}),
		}
	}
	return agents.Skill{
		Name:        "calculator",
		StateKey:    "calculator",
		Description: "Basic arithmetic with a configurable precision.",
		Category:    "math",
		Vsn:         "1.0.0",
		Tags:        []string{"math", "example"},
		Schema: `{
		  "type": "object",
		  "properties": {"last_result": {"type": "number", "default": 0}},
		  "required": ["last_result"]
		}`,
		ConfigSchema: `{
		  "type": "object",
		  "properties": {
		    "precision": {"type": "integer", "minimum": 0, "maximum": 15, "default": 2, "description": "decimal places results are rounded to"},
		    "report_to": {"type": "string", "default": "", "description": "an action run with {\"value\": result} after each operation"}
		  },
		  "additionalProperties": false
		}`,
		SignalPatterns: []string{"calculator.*"},
		Actions: []agents.Action{
			op("add", "a + b", func(a, b float64) (float64, error) { return a + b, nil }),
			op("subtract", "a - b", func(a, b float64) (float64, error) { return a - b, nil }),
			op("multiply", "a × b", func(a, b float64) (float64, error) { return a * b, nil }),
			op("divide", "a ÷ b; b must not be 0", func(a, b float64) (float64, error) {
				if b == 0 {
					return 0, agents.Fail("division_by_zero", "cannot divide %v by zero", a)
				}
				return a / b, nil
			}),
		},
		Routes: []agents.Route{
			{Pattern: "calculator.add", Action: "add"},
			{Pattern: "calculator.subtract", Action: "subtract"},
			{Pattern: "calculator.multiply", Action: "multiply"},
			{Pattern: "calculator.divide", Action: "divide"},
		},
	}
}

func round(x float64, places int) float64 {
	p := math.Pow10(places)
	return math.Round(x*p) / p
}
