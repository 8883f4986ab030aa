package agents_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/jido-bus/jido-bus/agents"
	"github.com/jido-bus/jido-bus/bus"
)

func signal(t *testing.T, typ, id, data string) bus.Signal {
	t.Helper()
	s, err := agents.NewSignal(typ, json.RawMessage(data))
	if err != nil {
		t.Fatal(err)
	}
	s.SetID(id)
	s.SetSource("test")
	return s
}

func onlyError(t *testing.T, dirs []agents.Directive, context, reason string) agents.Error {
	t.Helper()
	if len(dirs) != 1 {
		t.Fatalf("got %d directives %#v, want one Error", len(dirs), dirs)
	}
	e, ok := dirs[0].(agents.Error)
	if !ok || e.Context != context || e.Err.Type != reason {
		t.Fatalf("directive %#v, want an Error with context %s and type %s", dirs[0], context, reason)
	}
	return e
}

func TestPanicsBecomeErrorDirectives(t *testing.T) {
	def := agents.MustDefine(agents.Spec{
		Name: "fragile",
		Actions: []agents.Action{
			{Name: "boom", Run: func(agents.Env, json.RawMessage) (agents.Result, error) { panic("kaboom") }},
			{Name: "index", Run: func(env agents.Env, _ json.RawMessage) (agents.Result, error) {
				var xs []int
				return agents.Result{}, fmt.Errorf("unreachable %d", xs[len(env.AgentID)]) // a runtime panic, not a panic() call
			}},
			{Name: "ok", Run: func(agents.Env, json.RawMessage) (agents.Result, error) {
				return agents.Result{Ops: []agents.StateOp{agents.SetPath{Path: []string{"ran"}, Value: true}}}, nil
			}},
		},
	})
	a, _ := def.New("f", nil)
	next, dirs := agents.Cmd(a, agents.Instruction{Action: "boom"}, agents.Instruction{Action: "index"}, agents.Instruction{Action: "ok"})
	if len(dirs) != 2 {
		t.Fatalf("got %#v", dirs)
	}
	for i, d := range dirs {
		e := d.(agents.Error)
		if e.Context != agents.ContextPanic || e.Err.Type != agents.ReasonPanic {
			t.Errorf("directive %d = %#v", i, e)
		}
	}
	if !strings.Contains(dirs[0].(agents.Error).Err.Message, "kaboom") {
		t.Errorf("panic message lost: %v", dirs[0])
	}
	if next.State["ran"] != true {
		t.Error("Cmd stopped after a panicking instruction")
	}
}

func TestActionErrorsKeepTheirType(t *testing.T) {
	def := agents.MustDefine(agents.Spec{Name: "e", Actions: []agents.Action{
		{Name: "typed", Run: func(agents.Env, json.RawMessage) (agents.Result, error) {
			return agents.Result{}, agents.Fail("over_quota", "too many")
		}},
		{Name: "plain", Run: func(agents.Env, json.RawMessage) (agents.Result, error) { return agents.Result{}, errors.New("nope") }},
		{Name: "params", Run: agents.Typed(func(agents.Env, struct{ N int }) (agents.Result, error) { return agents.Result{}, nil })},
		{Name: "transition", Run: func(agents.Env, json.RawMessage) (agents.Result, error) { return agents.Result{Transition: "x"}, nil }},
		{Name: "loop", Run: func(agents.Env, json.RawMessage) (agents.Result, error) {
			return agents.Result{Then: []agents.Instruction{{Action: "loop"}}}, nil
		}},
	}})
	a, _ := def.New("e", nil)
	_, d := agents.Cmd(a, agents.Instruction{Action: "typed"})
	onlyError(t, d, agents.ContextAction, "over_quota")
	_, d = agents.Cmd(a, agents.Instruction{Action: "plain"})
	onlyError(t, d, agents.ContextAction, agents.ReasonActionFailed)
	_, d = agents.Cmd(a, agents.Instruction{Action: "params", Params: json.RawMessage(`{"N":"x"}`)})
	onlyError(t, d, agents.ContextParams, agents.ReasonInvalidParams)
	_, d = agents.Cmd(a, agents.Instruction{Action: "transition"})
	onlyError(t, d, agents.ContextState, agents.ReasonTransitionDenied)
	_, d = agents.Cmd(a, agents.Instruction{Action: "loop"})
	onlyError(t, d, agents.ContextInstruction, agents.ReasonTooDeep)
	_, d = agents.Cmd(agents.Agent{ID: "zero"}, agents.Instruction{Action: "x"})
	onlyError(t, d, agents.ContextAgent, agents.ReasonNoDefinition)
}

// TestSkillHooks: HandleSignal and TransformResult run in Step for skills
// whose signal patterns match, never in Cmd; Mount and ChildSpecs are for
// the runtime.
func TestSkillHooks(t *testing.T) {
	var handled, transformed int
	echo := agents.Skill{
		Name: "echo", StateKey: "echo",
		Schema:         `{"properties":{"said":{"type":"string","default":""}}}`,
		SignalPatterns: []string{"echo.**"},
		Actions: []agents.Action{{Name: "say", Run: agents.Typed(func(env agents.Env, p struct{ Text string }) (agents.Result, error) {
			e, err := agents.NewEmit("echo.said", p)
			return agents.Result{Ops: []agents.StateOp{agents.Set{Values: map[string]any{"said": p.Text}}}, Directives: []agents.Directive{e}}, err
		})}},
		Routes: []agents.Route{{Pattern: "echo.say", Action: "say"}},
		HandleSignal: func(sig bus.Signal, cfg map[string]any) (bus.Signal, error) {
			handled++
			var p map[string]string
			_ = json.Unmarshal(sig.Data(), &p)
			if p["Text"] == "fail" {
				return sig, errors.New("refused")
			}
			if p["Text"] == "panic" {
				panic("in hook")
			}
			p["Text"] = strings.ToUpper(p["Text"]) + cfg["suffix"].(string)
			err := bus.SetJSONData(&sig, p)
			return sig, err
		},
		TransformResult: func(sig bus.Signal, dirs []agents.Directive, cfg map[string]any) ([]agents.Directive, error) {
			transformed++
			return append(dirs, agents.Stop{Reason: "echoed"}), nil
		},
		Mount: func(s agents.State, cfg map[string]any) (agents.State, error) {
			return agents.State{"said": "mounted"}, nil
		},
		ChildSpecs: func(cfg map[string]any) []agents.SpawnAgent {
			return []agents.SpawnAgent{{Type: "counter", Tag: "helper"}}
		},
	}
	def := agents.MustDefine(agents.Spec{Name: "hooked", Skills: []agents.Attachment{agents.Use(echo, map[string]any{"suffix": "!"})}})
	a, _ := def.New("h", nil)

	next, dirs := agents.Step(a, signal(t, "echo.say", "s1", `{"Text":"hi"}`))
	if next.State.Object("echo").String("said") != "HI!" || len(dirs) != 2 {
		t.Fatalf("Step: state %v, directives %#v", next.State, dirs)
	}
	if _, ok := dirs[1].(agents.Stop); !ok {
		t.Errorf("TransformResult's directive missing: %#v", dirs)
	}
	if id := dirs[0].(agents.Emit).Signal.ID(); !strings.HasPrefix(id, "s1~") || !strings.HasSuffix(id, ".0") {
		t.Errorf("emitted id %q", dirs[0].(agents.Emit).Signal.ID())
	}
	if handled != 1 || transformed != 1 {
		t.Errorf("hooks ran %d/%d times in Step", handled, transformed)
	}
	agents.Cmd(a, agents.Instruction{Action: "echo.say", Params: json.RawMessage(`{"Text":"x"}`)})
	if handled != 1 || transformed != 1 {
		t.Error("Cmd called a process-layer hook")
	}
	after, d := agents.Step(a, signal(t, "echo.say", "s2", `{"Text":"fail"}`))
	onlyError(t, d, agents.ContextHook, agents.ReasonHookFailed)
	if after.State.Object("echo").String("said") != "" {
		t.Error("a failed hook changed state")
	}
	_, d = agents.Step(a, signal(t, "echo.say", "s3", `{"Text":"panic"}`))
	onlyError(t, d, agents.ContextHook, agents.ReasonPanic)
	_, d = agents.Step(a, signal(t, "other.thing", "s4", `{}`))
	onlyError(t, d, agents.ContextRouting, agents.ReasonNoRoute)

	mounted, err := def.Mount(a)
	if err != nil || mounted.State.Object("echo").String("said") != "mounted" {
		t.Errorf("Mount = %v, %v", mounted.State, err)
	}
	if a.State.Object("echo").String("said") != "" {
		t.Error("Mount modified the agent it was given")
	}
	if cs := def.ChildSpecs(); len(cs) != 1 || cs[0].Tag != "helper" {
		t.Errorf("ChildSpecs = %#v", cs)
	}
}

func TestNewAndRestoreCheckTheirInput(t *testing.T) {
	reg := testTypes(t)
	def, _ := reg.Lookup("counter")
	if _, err := def.New("bad id!", nil); err == nil {
		t.Error("New accepted an invalid agent id")
	}
	if _, err := def.New("c", map[string]any{"count": func() {}}); err == nil {
		t.Error("New accepted an unencodable initial state")
	}
	if _, err := def.Restore("c", []byte(`{"count":"x"}`)); err == nil {
		t.Error("Restore accepted a state that fails the schema")
	}
	if _, err := def.Restore("c", []byte(`[`)); err == nil {
		t.Error("Restore accepted malformed JSON")
	}
	a, err := def.Restore("c", []byte(`{"count":7}`))
	if err != nil || a.State.Number("count") != 7 || a.Type() != "counter" || a.Definition() != def {
		t.Errorf("Restore = %+v, %v", a, err)
	}
	if err := reg.Register(def); err == nil {
		t.Error("registering a type name twice succeeded")
	}
}
