package agents_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/jido-bus/jido-bus/agents"
	"github.com/jido-bus/jido-bus/agents/builtin"
	"github.com/jido-bus/jido-bus/bus"
)

// testTypes returns the agent types the testdata files can start: the
// built-in ones and a few that exercise one feature each.
func testTypes(t testing.TB) *agents.Registry {
	t.Helper()
	reg := agents.NewRegistry()
	if err := builtin.Register(reg); err != nil {
		t.Fatal(err)
	}
	for _, d := range []*agents.Definition{machineAgent(t), twoCalculators(t)} {
		if err := reg.Register(d); err != nil {
			t.Fatal(err)
		}
	}
	return reg
}

// machineAgent is an FSM agent: idle -> running -> done|failed, and back
// to idle from failed.
func machineAgent(t testing.TB) *agents.Definition {
	fsm, err := agents.NewFSM(agents.FSMSpec{
		Initial: "idle",
		Transitions: map[string][]string{
			"idle":    {"running"},
			"running": {"done", "failed"},
			"failed":  {"idle"},
			"done":    {},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	move := agents.Action{
		Name: "move", Params: `{"type":"object","properties":{"to":{"type":"string"}},"required":["to"]}`,
		Run: agents.Typed(func(env agents.Env, p struct{ To string }) (agents.Result, error) {
			e, err := agents.NewEmit("machine.moved", map[string]string{"to": p.To})
			return agents.Result{
				Transition: p.To,
				Ops:        []agents.StateOp{agents.SetPath{Path: []string{"moves"}, Value: env.State.Number("moves") + 1}},
				Directives: []agents.Directive{e},
			}, err
		}),
	}
	return agents.MustDefine(agents.Spec{
		Name:         "machine",
		Schema:       `{"type":"object","properties":{"moves":{"type":"integer","default":0}}}`,
		Actions:      []agents.Action{move},
		Routes:       []agents.Route{{Pattern: "machine.move", Action: "move"}},
		Strategy:     fsm,
		DefaultState: map[string]any{},
	})
}

// twoCalculators attaches the calculator skill twice, the second under the
// alias "precise".
func twoCalculators(t testing.TB) *agents.Definition {
	return agents.MustDefine(agents.Spec{
		Name: "two-calculators",
		Skills: []agents.Attachment{
			agents.Use(builtin.CalculatorSkill(), nil),
			agents.UseAs(builtin.CalculatorSkill(), "precise", map[string]any{"precision": 6}),
		},
	})
}

func TestDataDriven(t *testing.T) {
	datadriven.Walk(t, "testdata/cmd", func(t *testing.T, path string) {
		reg := testTypes(t)
		codec := agents.NewDirectiveCodec()
		var agent agents.Agent
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			switch d.Cmd {
			case "new":
				var typ, id string
				d.ScanArgs(t, "type", &typ)
				d.ScanArgs(t, "id", &id)
				def, ok := reg.Lookup(typ)
				if !ok {
					return "no such type"
				}
				var initial map[string]any
				if strings.TrimSpace(d.Input) != "" {
					if err := json.Unmarshal([]byte(d.Input), &initial); err != nil {
						t.Fatal(err)
					}
				}
				a, err := def.New(id, initial)
				if err != nil {
					return "error: " + err.Error()
				}
				agent = a
				return "state: " + stateJSON(t, agent.State)
			case "signal":
				sig := bus.Signal{}
				sig.SetSpecVersion(bus.SpecVersion)
				var typ, id string
				d.ScanArgs(t, "type", &typ)
				d.ScanArgs(t, "id", &id)
				sig.SetType(typ)
				sig.SetID(id)
				sig.SetSource("test")
				sig.SetTime(time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC))
				if in := strings.TrimSpace(d.Input); in != "" {
					if err := bus.SetJSONData(&sig, json.RawMessage(in)); err != nil {
						t.Fatal(err)
					}
				}
				next, dirs := agents.Step(agent, sig)
				agent = next
				return describe(t, codec, agent, dirs)
			case "cmd":
				var action string
				d.ScanArgs(t, "action", &action)
				in := agents.Instruction{Action: action}
				if p := strings.TrimSpace(d.Input); p != "" {
					in.Params = json.RawMessage(p)
				}
				if d.HasArg("origin") {
					d.ScanArgs(t, "origin", &in.Origin.ID)
				}
				next, dirs := agents.Cmd(agent, in)
				agent = next
				return describe(t, codec, agent, dirs)
			case "routes":
				var b strings.Builder
				for _, r := range agent.Definition().Routes() {
					fmt.Fprintf(&b, "%s prio=%d -> %s", r.Pattern, r.Priority, r.Action)
					if r.Skill != "" {
						fmt.Fprintf(&b, " (skill %s)", r.Skill)
					}
					b.WriteByte('\n')
				}
				return b.String()
			}
			t.Fatalf("unknown command %s", d.Cmd)
			return ""
		})
	})
}

func stateJSON(t *testing.T, s agents.State) string {
	b, err := agents.EncodeState(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func describe(t *testing.T, codec *agents.DirectiveCodec, a agents.Agent, dirs []agents.Directive) string {
	var b strings.Builder
	fmt.Fprintf(&b, "state: %s\n", stateJSON(t, a.State))
	for i, d := range dirs {
		enc, err := codec.Encode(d)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%d: %s\n", i, enc)
	}
	return b.String()
}
