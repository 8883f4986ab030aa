package agents_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"

	"github.com/jido-bus/jido-bus/agents"
	"github.com/jido-bus/jido-bus/agents/builtin"
)

func counterFor(b *testing.B, validate bool) agents.Agent {
	spec := builtin.CounterSpec()
	if !validate {
		for i := range spec.Actions {
			spec.Actions[i].Params = ""
		}
	}
	def, err := agents.Define(spec)
	if err != nil {
		b.Fatal(err)
	}
	a, err := def.New("c", nil)
	if err != nil {
		b.Fatal(err)
	}
	return a
}

// BenchmarkCmdCounter measures one counter.increment instruction through
// Cmd: decode params, update state, build and complete the counter.changed
// signal.
func BenchmarkCmdCounter(b *testing.B) {
	in := agents.Instruction{Action: "increment", Params: json.RawMessage(`{"by":2}`), Origin: agents.Origin{ID: "01J0000000000000000000000", Time: time.Unix(1700000000, 0)}}
	for _, validate := range []bool{false, true} {
		b.Run(fmt.Sprintf("validate=%v", validate), func(b *testing.B) {
			a := counterFor(b, validate)
			b.ReportAllocs()
			for b.Loop() {
				a, _ = agents.Cmd(a, in)
			}
		})
	}
}

// BenchmarkCmdFloor is the same-run baseline of BenchmarkCmdCounter: the
// two things a counter step must produce, built the plainest way — the
// state map copied (copy-on-write), and the emitted counter.changed
// CloudEvent built with the sdk's own setters — with nothing else of Cmd
// around them. Cmd cannot be cheaper than this on the same machine.
func BenchmarkCmdFloor(b *testing.B) {
	state := map[string]any{"count": 1.0}
	at := time.Unix(1700000000, 0)
	data := []byte(`{"count":3}`)
	var keep map[string]any
	var ev event.Event
	b.ReportAllocs()
	for b.Loop() {
		keep = maps.Clone(state)
		keep["count"] = 3.0
		ev = event.New()
		ev.SetID("01J0000000000000000000000.0")
		ev.SetSource("/agent/c")
		ev.SetType(builtin.CounterChanged)
		ev.SetTime(at)
		ev.SetExtension("causationid", "01J0000000000000000000000")
		if err := ev.SetData(event.ApplicationJSON, data); err != nil {
			b.Fatal(err)
		}
	}
	if keep["count"] != 3.0 || ev.ID() == "" {
		b.Fatal("the floor built nothing")
	}
}

// BenchmarkStepCounter adds routing the signal to Cmd.
func BenchmarkStepCounter(b *testing.B) {
	a := counterFor(b, false)
	sig, _ := agents.NewSignal(builtin.CounterIncrement, json.RawMessage(`{"by":2}`))
	sig.SetID("01J0000000000000000000000")
	sig.SetSource("bench")
	b.ReportAllocs()
	for b.Loop() {
		a, _ = agents.Step(a, sig)
	}
}

// BenchmarkCmdFiveSkills runs an instruction of one skill on an agent that
// has five (the calculator and stats skills, and three more aliased
// calculators), so state has five slices to copy around.
func BenchmarkCmdFiveSkills(b *testing.B) {
	def, err := agents.Define(agents.Spec{
		Name: "five",
		Skills: []agents.Attachment{
			agents.Use(builtin.CalculatorSkill(), map[string]any{"report_to": "stats.record"}),
			agents.Use(builtin.StatsSkill(), map[string]any{"window": 10}),
			agents.UseAs(builtin.CalculatorSkill(), "c2", nil),
			agents.UseAs(builtin.CalculatorSkill(), "c3", nil),
			agents.UseAs(builtin.CalculatorSkill(), "c4", nil),
		},
	})
	if err != nil {
		b.Fatal(err)
	}
	a, err := def.New("five", nil)
	if err != nil {
		b.Fatal(err)
	}
	in := agents.Instruction{Action: "calculator.add", Params: json.RawMessage(`{"a":1.5,"b":2}`), Origin: agents.Origin{ID: "x", Time: time.Unix(1700000000, 0)}}
	b.ReportAllocs()
	for b.Loop() {
		a, _ = agents.Cmd(a, in)
	}
}

// BenchmarkTyped measures Typed decoding params: into a struct of plain
// fields, and into one with a pointer field.
func BenchmarkTyped(b *testing.B) {
	type flat struct{ A, B float64 }
	type ptr struct {
		By *int64 `json:"by"`
	}
	var sum float64
	b.Run("flat", func(b *testing.B) {
		run := agents.Typed(func(_ agents.Env, p flat) (agents.Result, error) { sum += p.A; return agents.Result{}, nil })
		params := json.RawMessage(`{"A":1.5,"B":2}`)
		b.ReportAllocs()
		for b.Loop() {
			_, _ = run(agents.Env{}, params)
		}
	})
	b.Run("pointer", func(b *testing.B) {
		run := agents.Typed(func(_ agents.Env, p ptr) (agents.Result, error) { sum += float64(*p.By); return agents.Result{}, nil })
		params := json.RawMessage(`{"by":2}`)
		b.ReportAllocs()
		for b.Loop() {
			_, _ = run(agents.Env{}, params)
		}
	})
}
