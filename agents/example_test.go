package agents_test

import (
	"fmt"
	"time"

	"github.com/jido-bus/jido-bus/agents"
)

// A user defines an agent type from two skills — a greeter and a visit
// counter — and runs Cmd and Step on it. The greeter hands each visitor's
// name on to the counter skill with a Then instruction.
func Example() {
	greeter := agents.Skill{
		Name:         "greeter",
		StateKey:     "greeter",
		Schema:       `{"type":"object","properties":{"last":{"type":"string","default":""}}}`,
		ConfigSchema: `{"type":"object","properties":{"greeting":{"type":"string","default":"Hello"}}}`,
		Actions: []agents.Action{{
			Name:   "greet",
			Params: `{"type":"object","properties":{"name":{"type":"string","minLength":1}},"required":["name"]}`,
			Run: agents.Typed(func(env agents.Env, p struct{ Name string }) (agents.Result, error) {
				text := fmt.Sprintf("%s, %s!", env.Config["greeting"], p.Name)
				emit, err := agents.NewEmit("greeter.greeted", map[string]string{"text": text})
				visit, _ := agents.NewInstruction("visits.count", map[string]string{"name": p.Name})
				return agents.Result{
					Ops:        []agents.StateOp{agents.SetPath{Path: []string{"last"}, Value: p.Name}},
					Directives: []agents.Directive{emit},
					Then:       []agents.Instruction{visit},
				}, err
			}),
		}},
		Routes: []agents.Route{{Pattern: "greeter.greet", Action: "greet"}},
	}
	visits := agents.Skill{
		Name:     "visits",
		StateKey: "visits",
		Schema:   `{"type":"object","properties":{"by_name":{"type":"object","default":{}}}}`,
		Actions: []agents.Action{{
			Name: "count",
			Run: agents.Typed(func(env agents.Env, p struct{ Name string }) (agents.Result, error) {
				n := env.State.Object("by_name").Number(p.Name)
				return agents.Result{Ops: []agents.StateOp{agents.SetPath{Path: []string{"by_name", p.Name}, Value: n + 1}}}, nil
			}),
		}},
	}
	def, err := agents.Define(agents.Spec{
		Name: "host",
		Skills: []agents.Attachment{
			agents.Use(greeter, map[string]any{"greeting": "Welcome"}),
			agents.Use(visits, nil),
		},
	})
	if err != nil {
		panic(err)
	}
	host, _ := def.New("host-1", nil)

	// Cmd runs instructions directly.
	greet, _ := agents.NewInstruction("greeter.greet", map[string]string{"name": "Ada"})
	greet.Origin = agents.Origin{ID: "req-1", Time: time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)}
	host, directives := agents.Cmd(host, greet)
	state, _ := agents.EncodeState(host.State)
	fmt.Println(string(state))
	emit := directives[0].(agents.Emit)
	fmt.Println(emit.Signal.ID(), emit.Signal.Type(), string(emit.Signal.Data()))

	// Step routes a signal; bad params become an Error directive.
	sig, _ := agents.NewSignal("greeter.greet", map[string]string{"name": ""})
	sig.SetID("req-2")
	sig.SetSource("example")
	_, directives = agents.Step(host, sig)
	log, _ := agents.NewDirectiveCodec().EncodeAll(directives)
	fmt.Println(string(log))
	// Output:
	// {"greeter":{"last":"Ada"},"visits":{"by_name":{"Ada":1}}}
	// req-1.0 greeter.greeted {"text":"Welcome, Ada!"}
	// [{"kind":"error","error":{"type":"invalid_params","message":"greeter.greet params: /name: minLength: got 0, want 1"},"context":"params","action":"greeter.greet"}]
}

// Directives go to the log as JSON with a "kind" member, and come back
// from it unchanged.
func ExampleDirectiveCodec() {
	codec := agents.NewDirectiveCodec()
	sig, _ := agents.NewSignal("reminder.due", nil)
	sig.SetID("r1")
	sig.SetSource("/agent/a")
	b, _ := codec.Encode(agents.Schedule{Delay: 90 * time.Second, Signal: sig})
	fmt.Println(string(b))
	d, _ := codec.Decode(b)
	fmt.Println(d.(agents.Schedule).Delay)
	// Output:
	// {"kind":"schedule","delay_ms":90000,"signal":{"specversion":"1.0","id":"r1","source":"/agent/a","type":"reminder.due"}}
	// 1m30s
}

// Third-party directive types register a codec on the runtime's codec.
func ExampleRegisterDirective() {
	codec := agents.NewDirectiveCodec()
	if err := agents.RegisterDirective[notify](codec); err != nil {
		panic(err)
	}
	b, _ := codec.Encode(notify{Channel: "ops", Text: "disk full"})
	fmt.Println(string(b))
	// Output: {"kind":"notify","channel":"ops","text":"disk full"}
}

type notify struct {
	Channel string `json:"channel"`
	Text    string `json:"text"`
}

func (notify) DirectiveKind() string { return "notify" }
