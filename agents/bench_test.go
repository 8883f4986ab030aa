package agents_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"strconv"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/cloudevents/sdk-go/v2/types"

	"github.com/jido-bus/jido-bus/agents"
	"github.com/jido-bus/jido-bus/agents/builtin"
	"github.com/jido-bus/jido-bus/bus"
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
// two things a counter step must hand back — the new state (a copy of the
// state map, copy-on-write) and the directive emitting counter.changed
// with its id, source, time and causationid filled in — built with
// nothing of Cmd around them, two ways:
//
//   - sdk: the event built with the sdk's own setters, as a user would;
//   - by_hand: every piece that must be allocated, and nothing else, in as
//     few allocations as the types allow (the context, its time and the
//     data in one block; the id; the extensions map and its boxed value;
//     the boxed count; the Emit in its Directive). No generic Cmd can be
//     cheaper than this with these types on the same machine.
func BenchmarkCmdFloor(b *testing.B) {
	const origin = "01J0000000000000000000000"
	at := time.Unix(1700000000, 0)
	b.Run("sdk", func(b *testing.B) {
		state := map[string]any{"count": 1.0}
		data := []byte(`{"count":3}`)
		var keep map[string]any
		var ev event.Event
		b.ReportAllocs()
		for b.Loop() {
			keep = maps.Clone(state)
			keep["count"] = 3.0
			ev = event.New()
			ev.SetID(origin + ".0")
			ev.SetSource("/agent/c")
			ev.SetType(builtin.CounterChanged)
			ev.SetTime(at)
			ev.SetExtension("causationid", origin)
			if err := ev.SetData(event.ApplicationJSON, data); err != nil {
				b.Fatal(err)
			}
		}
		if keep["count"] != 3.0 || ev.ID() == "" {
			b.Fatal("the floor built nothing")
		}
	})
	b.Run("by_hand", func(b *testing.B) {
		type block struct {
			ctx  event.EventContextV1
			time types.Timestamp
			data [24]byte
		}
		state := map[string]any{"count": 1.0}
		src := event.New()
		src.SetSource("/agent/c")
		contentType := event.ApplicationJSON
		var keep map[string]any
		var dirs []agents.Directive
		n := 0
		b.ReportAllocs()
		for b.Loop() {
			n++
			keep = maps.Clone(state)
			keep["count"] = float64(n)
			blk := &block{}
			blk.ctx = event.EventContextV1{
				ID: agents.DeriveID(origin, 0), Source: src.Context.(*event.EventContextV1).Source,
				Type: builtin.CounterChanged, DataContentType: &contentType, Time: &blk.time,
				Extensions: map[string]any{"causationid": floorCause},
			}
			blk.time.Time = at
			data := strconv.AppendInt(append(blk.data[:0], `{"count":`...), int64(n), 10)
			data = append(data, '}')
			dirs = []agents.Directive{agents.Emit{Signal: bus.Signal{Context: &blk.ctx, DataEncoded: data}}}
		}
		if keep["count"] != float64(n) || dirs[0].(agents.Emit).Signal.ID() == "" {
			b.Fatal("the floor built nothing")
		}
	})
}

// floorCause is the causationid of BenchmarkCmdFloor/by_hand, a variable
// so that boxing it costs what boxing an input's id costs in Cmd (a
// constant would be boxed for free).
var floorCause = "01J0000000000000000000000"

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
