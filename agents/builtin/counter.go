package builtin

import (
	"encoding/json"
	"strconv"

	"github.com/jido-bus/jido-bus/agents"
)

// Counter signal types.
const (
	CounterIncrement = "counter.increment" // {"by": n}, n defaults to 1
	CounterDecrement = "counter.decrement" // {"by": n}, n defaults to 1
	CounterReset     = "counter.reset"     // no data
	CounterChanged   = "counter.changed"   // emitted: {"count": n}
)

const stepParams = `{
  "type": "object",
  "properties": {"by": {"type": "integer", "default": 1, "description": "how much to add or take away"}},
  "additionalProperties": false
}`

// CounterActions returns the counter's actions: increment, decrement and
// reset. Each emits counter.changed with the new count.
func CounterActions() []agents.Action {
	type step struct {
		By *int64 `json:"by"`
	}
	by := func(p step) float64 {
		if p.By == nil {
			return 1
		}
		return float64(*p.By)
	}
	return []agents.Action{
		{
			Name: "increment", Description: "Add by (default 1) to count.", Params: stepParams,
			Run: agents.Typed(func(env agents.Env, p step) (agents.Result, error) {
				return setCount(env.State.Number("count") + by(p))
			}),
		},
		{
			Name: "decrement", Description: "Take by (default 1) from count.", Params: stepParams,
			Run: agents.Typed(func(env agents.Env, p step) (agents.Result, error) {
				return setCount(env.State.Number("count") - by(p))
			}),
		},
		{
			Name: "reset", Description: "Set count to 0.", Params: `{"type": "object", "additionalProperties": false}`,
			Run: func(agents.Env, json.RawMessage) (agents.Result, error) { return setCount(0) },
		},
	}
}

func setCount(n float64) (agents.Result, error) {
	// This is the counter's hot path, the one the benchmark of Cmd
	// measures, so it is written for speed: the payload, one number, is
	// written directly instead of through a reflective json.Marshal, and
	// the result's pieces share one allocation (countResult).
	out := new(countResult)
	data := strconv.AppendFloat(append(out.data[:0], `{"count":`...), n, 'f', -1, 64)
	emit, err := agents.NewEmit(CounterChanged, json.RawMessage(append(data, '}')))
	if err != nil {
		return agents.Result{}, err
	}
	out.path[0] = "count"
	out.set = agents.SetPath{Path: out.path[:], Value: n}
	out.ops[0] = &out.set
	out.dirs[0] = emit
	return agents.Result{Ops: out.ops[:], Directives: out.dirs[:]}, nil
}

// countResult holds what one setCount result points to. Cmd copies what
// it keeps (the state value, the signal), so nothing outlives the call.
type countResult struct {
	data [40]byte // {"count":<float64>} fits: 9 + at most 24 + 1 bytes
	path [1]string
	set  agents.SetPath
	ops  [1]agents.StateOp
	dirs [1]agents.Directive
}

// CounterSpec returns the counter's definition spec, for callers that want
// to change it (the benchmarks drop the params schemas) before Define.
func CounterSpec() agents.Spec {
	return agents.Spec{
		Name:        "counter",
		Description: "Counts up and down; emits counter.changed after each change.",
		Schema: `{
		  "type": "object",
		  "properties": {"count": {"type": "number", "default": 0}},
		  "required": ["count"]
		}`,
		Actions: CounterActions(),
		Routes: []agents.Route{
			{Pattern: CounterIncrement, Action: "increment"},
			{Pattern: CounterDecrement, Action: "decrement"},
			{Pattern: CounterReset, Action: "reset"},
		},
	}
}

// NewCounter returns the counter agent type: state {"count": n}.
func NewCounter() (*agents.Definition, error) { return agents.Define(CounterSpec()) }
