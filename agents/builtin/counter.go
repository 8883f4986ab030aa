package builtin

import (
	"encoding/json"
	"math"
	"strconv"

	"github.com/cloudevents/sdk-go/v2/event"

	"github.com/jido-bus/jido-bus/agents"
	"github.com/jido-bus/jido-bus/bus"
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
	return []agents.Action{
		{
			Name: "increment", Description: "Add by (default 1) to count.", Params: stepParams,
			Run: stepAction(func(count, by float64) float64 { return count + by }),
		},
		{
			Name: "decrement", Description: "Take by (default 1) from count.", Params: stepParams,
			Run: stepAction(func(count, by float64) float64 { return count - by }),
		},
		{
			Name: "reset", Description: "Set count to 0.", Params: `{"type": "object", "additionalProperties": false}`,
			Run: func(agents.Env, json.RawMessage) (agents.Result, error) { return setCount(0) },
		},
	}
}

// step is the params of increment and decrement.
type step struct {
	By *int64 `json:"by"`
}

// stepAction returns the Run of an action that sets count to
// apply(count, by).
func stepAction(apply func(count, by float64) float64) func(agents.Env, json.RawMessage) (agents.Result, error) {
	typed := agents.Typed(func(env agents.Env, p step) (agents.Result, error) {
		by := 1.0
		if p.By != nil {
			by = float64(*p.By)
		}
		return setCount(apply(env.State.Number("count"), by))
	})
	return func(env agents.Env, params json.RawMessage) (agents.Result, error) {
		if by, ok := plainBy(params); ok {
			return setCount(apply(env.State.Number("count"), by))
		}
		return typed(env, params)
	}
}

// plainBy reads the params nearly every step has, none or {"by":n} with n
// an integer, as Typed would decode them into a step, without its
// reflection. It reports false for anything else (other members, null,
// a name in other case, a repeated member, a number that is not an
// int64, invalid JSON), which Typed then decodes, errors included.
func plainBy(params []byte) (float64, bool) {
	if len(params) == 0 {
		return 1, true
	}
	i, ok := skipPast(params, 0, `{`)
	if ok {
		i, ok = skipPast(params, i, `"by"`)
	}
	if ok {
		i, ok = skipPast(params, i, `:`)
	}
	if !ok {
		return 0, false
	}
	i = skipSpace(params, i)
	if i == len(params) {
		return 0, false
	}
	end, ok := bus.JSONNumberEnd(params, i)
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(string(params[i:end]), 10, 64)
	if err != nil {
		return 0, false
	}
	if i, ok = skipPast(params, end, `}`); !ok || skipSpace(params, i) != len(params) {
		return 0, false
	}
	return float64(n), true
}

// skipPast skips JSON white space from b[i] and then tok, and returns the
// index after tok; ok is false when tok is not there.
func skipPast(b []byte, i int, tok string) (int, bool) {
	i = skipSpace(b, i)
	if len(b)-i < len(tok) || string(b[i:i+len(tok)]) != tok {
		return 0, false
	}
	return i + len(tok), true
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

func setCount(n float64) (agents.Result, error) {
	// This is the counter's hot path, the one the benchmark of Cmd
	// measures, so it is written for speed: the payload, one number, is
	// written directly instead of through a reflective json.Marshal, and
	// the result's pieces, the signal's attributes included, share one
	// allocation (countResult).
	if math.IsNaN(n) || math.IsInf(n, 0) {
		// Not JSON, which NewEmit reports. (State holds no such number,
		// and a counter cannot count its way to one.)
		_, err := agents.NewEmit(CounterChanged, json.RawMessage(`{"count":`+strconv.FormatFloat(n, 'f', -1, 64)+`}`))
		return agents.Result{}, err
	}
	out := new(countResult)
	data := append(out.data[:0], `{"count":`...)
	if n == math.Trunc(n) && math.Abs(n) < 1<<53 && (n != 0 || !math.Signbit(n)) {
		// What AppendFloat(n, 'f', -1) writes for a whole number below
		// 2^53 other than -0 (its digits), in a fraction of the time.
		data = strconv.AppendInt(data, int64(n), 10)
	} else {
		data = strconv.AppendFloat(data, n, 'f', -1, 64)
	}
	data = append(data, '}')
	// The signal NewEmit(CounterChanged, json.RawMessage(data)) returns,
	// with its attributes in out, and the Emit given by pointer.
	out.contentType = event.ApplicationJSON
	out.attrs = event.EventContextV1{Type: CounterChanged, DataContentType: &out.contentType}
	out.emit = agents.Emit{Signal: bus.Signal{Context: &out.attrs, DataEncoded: data}}
	out.dirs[0] = &out.emit
	out.path[0] = "count"
	out.set = agents.SetPath{Path: out.path[:], Value: n}
	out.ops[0] = &out.set
	return agents.Result{Ops: out.ops[:], Directives: out.dirs[:]}, nil
}

// countResult holds what one setCount result points to. Cmd copies what
// it keeps (the Emit and its signal; the count is boxed on its own), so
// nothing here outlives the call.
type countResult struct {
	attrs       event.EventContextV1
	contentType string
	data        [40]byte // {"count":n} for any n short of 31 digits
	path        [1]string
	set         agents.SetPath
	ops         [1]agents.StateOp
	emit        agents.Emit
	dirs        [1]agents.Directive // &emit
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
