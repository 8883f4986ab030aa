package agents_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/jido-bus/jido-bus/agents"
	"github.com/jido-bus/jido-bus/agents/builtin"
)

func noop(agents.Env, json.RawMessage) (agents.Result, error) { return agents.Result{}, nil }

func skill(name, key string, actions ...string) agents.Skill {
	s := agents.Skill{Name: name, StateKey: key}
	for _, a := range actions {
		s.Actions = append(s.Actions, agents.Action{Name: a, Run: noop})
	}
	return s
}

func TestDefineErrorsNameAgentSkillAndKey(t *testing.T) {
	fsm, err := agents.NewFSM(agents.FSMSpec{Initial: "a", Transitions: map[string][]string{"a": nil}})
	if err != nil {
		t.Fatal(err)
	}
	withConfig := skill("win", "win", "x")
	withConfig.ConfigSchema = `{"type":"object","properties":{"window":{"type":"integer","minimum":1,"default":5}}}`
	routed := skill("r", "r", "x")
	routed.Routes = []agents.Route{{Pattern: "r.go", Action: "x"}, {Pattern: "r.go", Action: "x"}}
	routedOnce := skill("r", "r", "x")
	routedOnce.Routes = []agents.Route{{Pattern: "r.go", Action: "x"}}
	routedByHook := skill("h", "h", "x")
	routedByHook.Routes = []agents.Route{{Pattern: "h.go", Action: "x", Priority: 5}}
	routedByHook.Router = func(map[string]any) []agents.Route {
		return []agents.Route{{Pattern: "h.go", Action: "x", Priority: 5}}
	}
	badPatterns := skill("p", "p", "x")
	badPatterns.SignalPatterns = []string{"p..x"}
	children := skill("c", "c")
	children.ChildSpecs = func(map[string]any) []agents.SpawnAgent {
		return []agents.SpawnAgent{{Type: "counter", Tag: "w"}, {Type: "counter", Tag: "w"}}
	}
	badSchema := skill("s", "s")
	badSchema.Schema = `{"type":"nope"}`
	badConfigSchema := skill("s", "s")
	badConfigSchema.ConfigSchema = `{`

	tests := []struct {
		name              string
		spec              agents.Spec
		skill, key, cause string
	}{
		{"bad agent name", agents.Spec{Name: "a b"}, "", "name", "invalid"},
		{"bad own schema", agents.Spec{Name: "a", Schema: `{"type":1}`}, "", "schema", ""},
		{"own schema not an object", agents.Spec{Name: "a", Schema: `true`}, "", "schema", "object"},
		{"action without name", agents.Spec{Name: "a", Actions: []agents.Action{{Run: noop}}}, "", "actions", "no name"},
		{"action without run", agents.Spec{Name: "a", Actions: []agents.Action{{Name: "x"}}}, "", "x", "no Run"},
		{"duplicate action", agents.Spec{Name: "a", Actions: []agents.Action{{Name: "x", Run: noop}, {Name: "x", Run: noop}}}, "", "x", "twice"},
		{"bad params schema", agents.Spec{Name: "a", Actions: []agents.Action{{Name: "x", Run: noop, Params: `{"minimum":"0"}`}}}, "", "x", ""},
		{"route to a missing action", agents.Spec{Name: "a", Routes: []agents.Route{{Pattern: "a.b", Action: "nope"}}}, "", "a.b", "nope"},
		{"bad route pattern", agents.Spec{Name: "a", Actions: []agents.Action{{Name: "x", Run: noop}}, Routes: []agents.Route{{Pattern: "a.**.**", Action: "x"}}}, "", "a.**.**", "twice in a row"},
		{"priority out of range", agents.Spec{Name: "a", Actions: []agents.Action{{Name: "x", Run: noop}}, Routes: []agents.Route{{Pattern: "a", Action: "x", Priority: 101}}}, "", "a", "priority"},
		{"same pattern and priority", agents.Spec{Name: "a", Actions: []agents.Action{{Name: "x", Run: noop}}, Routes: []agents.Route{{Pattern: "a.*", Action: "x"}, {Pattern: "a.*", Action: "x"}}}, "", "a.*", "priority 0"},
		{"same pattern and priority in a skill", agents.Spec{Name: "a", Skills: []agents.Attachment{agents.Use(routed, nil)}}, "r", "r.go", "priority 0"},
		{"same pattern and priority from a Router hook", agents.Spec{Name: "a", Skills: []agents.Attachment{agents.Use(routedByHook, nil)}}, "h", "h.go", "priority 5"},
		{"skill route collides with an agent route", agents.Spec{Name: "a", Skills: []agents.Attachment{agents.Use(routedOnce, nil)}, Routes: []agents.Route{{Pattern: "r.go", Action: "r.x"}}}, "r", "r.go", "priority 0"},
		{"duplicate state key", agents.Spec{Name: "a", Skills: []agents.Attachment{agents.Use(skill("one", "k"), nil), agents.Use(skill("two", "k"), nil)}}, "two", "k", `already used by skill "one"`},
		{"same skill twice without alias", agents.Spec{Name: "a", Skills: []agents.Attachment{agents.Use(skill("one", "k"), nil), agents.Use(skill("one", "k"), nil)}}, "one", "k", "alias"},
		{"state key collides with own schema", agents.Spec{Name: "a", Schema: `{"properties":{"k":{}}}`, Skills: []agents.Attachment{agents.Use(skill("one", "k"), nil)}}, "one", "k", "own state"},
		{"state key collides with default state", agents.Spec{Name: "a", DefaultState: map[string]any{"k": 1}, Skills: []agents.Attachment{agents.Use(skill("one", "k"), nil)}}, "one", "k", "own state"},
		{"state key collides with the FSM key", agents.Spec{Name: "a", Strategy: fsm, Skills: []agents.Attachment{agents.Use(skill("one", "status"), nil)}}, "one", "status", "own state"},
		{"alias collides", agents.Spec{Name: "a", Skills: []agents.Attachment{agents.Use(skill("one", "k"), nil), agents.UseAs(skill("two", "t"), "k", nil)}}, "two as k", "k", "already used"},
		{"bad alias", agents.Spec{Name: "a", Skills: []agents.Attachment{agents.UseAs(skill("one", "k"), "a.b", nil)}}, "one", "as", "segment"},
		{"skill without state key", agents.Spec{Name: "a", Skills: []agents.Attachment{agents.Use(skill("one", ""), nil)}}, "one", "state_key", "no state key"},
		{"bad skill name", agents.Spec{Name: "a", Skills: []agents.Attachment{agents.Use(skill("o.ne", "k"), nil)}}, "o.ne", "name", "segment"},
		{"config fails its schema", agents.Spec{Name: "a", Skills: []agents.Attachment{agents.Use(withConfig, map[string]any{"window": 0})}}, "win", "config/window", "minimum"},
		{"config of the wrong type", agents.Spec{Name: "a", Skills: []agents.Attachment{agents.Use(withConfig, map[string]any{"window": "big"})}}, "win", "config/window", "want integer"},
		{"bad skill schema", agents.Spec{Name: "a", Skills: []agents.Attachment{agents.Use(badSchema, nil)}}, "s", "schema", ""},
		{"bad config schema", agents.Spec{Name: "a", Skills: []agents.Attachment{agents.Use(badConfigSchema, nil)}}, "s", "config_schema", ""},
		{"bad signal pattern", agents.Spec{Name: "a", Skills: []agents.Attachment{agents.Use(badPatterns, nil)}}, "p", "p..x", "empty segment"},
		{"duplicate child tag", agents.Spec{Name: "a", Skills: []agents.Attachment{agents.Use(children, nil)}}, "c", "w", "twice"},
		{"duplicate skill action", agents.Spec{Name: "a", Skills: []agents.Attachment{agents.Use(skill("one", "k", "x", "x"), nil)}}, "one", "x", "twice"},
		{"default state fails the schema", agents.Spec{Name: "a", Schema: `{"properties":{"n":{"type":"integer","default":"zero"}}}`}, "", "default_state/n", "want integer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := agents.Define(tt.spec)
			de, ok := errors.AsType[*agents.DefineError](err)
			if !ok {
				t.Fatalf("Define = %v, want a *DefineError", err)
			}
			if de.Agent != tt.spec.Name || de.Skill != tt.skill || de.Key != tt.key {
				t.Errorf("DefineError{Agent %q, Skill %q, Key %q}, want {%q, %q, %q}: %v", de.Agent, de.Skill, de.Key, tt.spec.Name, tt.skill, tt.key, err)
			}
			if !strings.Contains(err.Error(), tt.cause) || !strings.Contains(err.Error(), `agent "`+tt.spec.Name+`"`) {
				t.Errorf("error %q does not say %q", err, tt.cause)
			}
		})
	}
}

func TestMustDefinePanicsWithTheDefineError(t *testing.T) {
	defer func() {
		if _, ok := recover().(*agents.DefineError); !ok {
			t.Error("MustDefine did not panic with a *DefineError")
		}
	}()
	agents.MustDefine(agents.Spec{Name: ""})
}

func TestNewFSMChecksItsSpec(t *testing.T) {
	if _, err := agents.NewFSM(agents.FSMSpec{Initial: "x", Transitions: map[string][]string{"a": nil}}); err == nil {
		t.Error("an initial state that is not declared was accepted")
	}
	if _, err := agents.NewFSM(agents.FSMSpec{Initial: "a", Transitions: map[string][]string{"a": {"b"}}}); err == nil {
		t.Error("a transition to an undeclared state was accepted")
	}
	f, err := agents.NewFSM(agents.FSMSpec{Key: "phase", Initial: "a", Transitions: map[string][]string{"a": {"b"}, "b": nil}})
	if err != nil || f.StateKey() != "phase" || strings.Join(f.States(), ",") != "a,b" || f.Name() != "fsm" {
		t.Errorf("NewFSM = %v, %v", f, err)
	}
}

// TestRoutingOrder checks that Step runs the first route in DESIGN.md's
// order: most specific pattern, then priority, then registration order.
func TestRoutingOrder(t *testing.T) {
	var actions []agents.Action
	for _, n := range []string{"exact", "star", "multi", "low", "high", "first", "second"} {
		actions = append(actions, agents.Action{Name: n, Run: noop})
	}
	def := agents.MustDefine(agents.Spec{
		Name:    "router",
		Actions: actions,
		Routes: []agents.Route{
			{Pattern: "user.**", Action: "multi"},
			{Pattern: "user.*", Action: "star"},
			{Pattern: "user.created", Action: "exact"},
			{Pattern: "order.*", Action: "low", Priority: -10},
			{Pattern: "order.*", Action: "high", Priority: 10},
			{Pattern: "item.*.x", Action: "first"},
			{Pattern: "item.*.x", Action: "second", Priority: 1}, // same pattern, higher priority wins
			{Pattern: "tie.*", Action: "first", Priority: 3},
			{Pattern: "tie.*.**", Action: "second", Priority: 3},
		},
	})
	tests := map[string]string{
		"user.created":   "exact",
		"user.deleted":   "star",
		"user.a.b":       "multi",
		"user":           "multi",
		"order.placed":   "high",
		"item.7.x":       "second",
		"tie.a":          "first",
		"nothing.routes": "",
	}
	for typ, want := range tests {
		sig, _ := agents.NewSignal(typ, nil)
		sig.SetID("s")
		sig.SetSource("t")
		in, ok := def.Route(sig)
		if in.Action != want || ok != (want != "") {
			t.Errorf("Route(%s) = %q, %v; want %q", typ, in.Action, ok, want)
		}
	}
}

func TestIntrospection(t *testing.T) {
	def, err := builtin.NewCalculator()
	if err != nil {
		t.Fatal(err)
	}
	skills := def.Skills()
	if len(skills) != 2 || skills[0].Name != "calculator" || skills[1].StateKey != "stats" || skills[0].Category != "math" || skills[0].Vsn != "1.0.0" {
		t.Fatalf("Skills() = %+v", skills)
	}
	if strings.Join(skills[0].SignalPatterns, ",") != "calculator.*" || len(skills[0].Actions) != 4 {
		t.Errorf("calculator skill info %+v", skills[0])
	}
	var names []string
	for _, a := range def.Actions() {
		names = append(names, a.Name)
		if len(a.Params) == 0 || a.Skill == "" {
			t.Errorf("action %s: params %s, skill %q", a.Name, a.Params, a.Skill)
		}
	}
	if strings.Join(names, ",") != "calculator.add,calculator.subtract,calculator.multiply,calculator.divide,stats.record,stats.reset" {
		t.Errorf("Actions() = %q", names)
	}
	cfg, ok := def.SkillConfig("stats")
	if !ok || cfg["window"] != 10.0 {
		t.Errorf("SkillConfig(stats) = %v, %v", cfg, ok)
	}
	cfg["window"] = 99.0
	if again, _ := def.SkillConfig("stats"); again["window"] != 10.0 {
		t.Error("SkillConfig returned the definition's own map")
	}
	if c, _ := def.SkillConfig("calculator"); c["precision"] != 2.0 || c["report_to"] != "stats.record" {
		t.Errorf("calculator config %v", c)
	}
	if _, ok := def.SkillConfig("nope"); ok {
		t.Error("SkillConfig of an unknown skill")
	}
	a, err := def.New("c", nil)
	if err != nil {
		t.Fatal(err)
	}
	if st, ok := def.SkillState(a, "calculator"); !ok || st.Number("last_result") != 0 {
		t.Errorf("SkillState = %v, %v", st, ok)
	}
	var merged struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(def.Schema(), &merged); err != nil || merged.Properties["calculator"] == nil || merged.Properties["stats"] == nil {
		t.Errorf("Schema() = %s", def.Schema())
	}
	if len(def.Routes()) != 6 || def.Routes()[0].Skill != "calculator" {
		t.Errorf("Routes() = %+v", def.Routes())
	}
	if def.Name() != "calculator" || def.Description() == "" || def.Strategy().Name() != "direct" {
		t.Error("Name/Description/Strategy")
	}
	if b, _ := json.Marshal(a); !strings.HasPrefix(string(b), `{"id":"c","type":"calculator","state":{"calculator"`) {
		t.Errorf("Agent JSON = %s", b)
	}
}
