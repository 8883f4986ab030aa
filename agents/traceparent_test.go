package agents_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/jido-bus/jido-bus/agents"
	"github.com/jido-bus/jido-bus/bus"
)

// TestEmittedSignalsCarryTheInputsTraceParent: what a decision emits,
// schedules or runs belongs to the input's trace, as it answers the input
// (causationid): the signals carry its traceparent, the instruction's
// origin names it, and a signal that brings its own keeps it.
func TestEmittedSignalsCarryTheInputsTraceParent(t *testing.T) {
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	const own = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	def := agents.MustDefine(agents.Spec{
		Name: "tracer",
		Actions: []agents.Action{{Name: "go", Run: func(env agents.Env, _ json.RawMessage) (agents.Result, error) {
			plain, _ := agents.NewEmit("t.plain", nil)
			mine, _ := agents.NewEmit("t.mine", nil)
			mine.Signal.SetExtension(bus.ExtTraceParent, own)
			later, _ := agents.NewSignal("t.later", nil)
			in, _ := agents.NewInstruction("work", nil)
			return agents.Result{Directives: []agents.Directive{
				plain, mine, agents.Schedule{Delay: time.Second, Signal: later}, agents.RunInstruction{Instruction: in},
			}}, nil
		}}},
		Routes: []agents.Route{{Pattern: "t.go", Action: "go"}},
	})
	a, err := def.New("a1", nil)
	if err != nil {
		t.Fatal(err)
	}
	sig, err := bus.NewSignal("t.go", "/client", nil)
	if err != nil {
		t.Fatal(err)
	}
	sig.SetExtension(bus.ExtTraceParent, tp)
	_, dirs := agents.Step(a, sig)
	if len(dirs) != 4 {
		t.Fatalf("directives %v", dirs)
	}
	traceOf := func(s bus.Signal) any { return s.Extensions()[bus.ExtTraceParent] }
	if got := traceOf(dirs[0].(agents.Emit).Signal); got != tp {
		t.Errorf("emitted traceparent %v, want the input's", got)
	}
	if got := traceOf(dirs[1].(agents.Emit).Signal); got != own {
		t.Errorf("a signal's own traceparent became %v", got)
	}
	if got := traceOf(dirs[2].(agents.Schedule).Signal); got != tp {
		t.Errorf("scheduled traceparent %v, want the input's", got)
	}
	if got := dirs[3].(agents.RunInstruction).Instruction.Origin.TraceParent; got != tp {
		t.Errorf("instruction origin traceparent %q, want the input's", got)
	}

	// Without one on the input, none is made up.
	sig.SetExtension(bus.ExtTraceParent, nil)
	_, dirs = agents.Step(a, sig)
	if got, ok := dirs[0].(agents.Emit).Signal.Extensions()[bus.ExtTraceParent]; ok {
		t.Errorf("an input without traceparent emitted one: %v", got)
	}
}
