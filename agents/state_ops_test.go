package agents_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/jido-bus/jido-bus/agents"
)

// opsAgent has one own action that returns the ops it is given, and a
// skill "box" whose action does the same in its scope, so each operation
// is checked at the root and inside a skill's slice.
func opsAgent(t *testing.T, ops *[]agents.StateOp, newState *agents.State) agents.Agent {
	t.Helper()
	run := func(agents.Env, json.RawMessage) (agents.Result, error) {
		return agents.Result{State: *newState, Ops: *ops}, nil
	}
	def := agents.MustDefine(agents.Spec{
		Name:         "ops",
		DefaultState: map[string]any{"a": 1, "m": map[string]any{"x": 1, "y": map[string]any{"z": 1}}},
		Actions:      []agents.Action{{Name: "apply", Run: run}},
		Skills: []agents.Attachment{agents.Use(agents.Skill{
			Name: "box", StateKey: "box", Actions: []agents.Action{{Name: "apply", Run: run}},
		}, nil)},
	})
	a, err := def.New("o", map[string]any{"box": map[string]any{"k": "v"}})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestStateOperations(t *testing.T) {
	tests := []struct {
		name     string
		action   string
		newState agents.State
		ops      []agents.StateOp
		want     string // the whole state after, or "error: <substring>"
	}{
		{"set merges deeply", "apply", nil, []agents.StateOp{agents.Set{Values: map[string]any{"b": 2, "m": map[string]any{"y": map[string]any{"w": 2}}}}},
			`{"a":1,"b":2,"box":{"k":"v"},"m":{"x":1,"y":{"w":2,"z":1}}}`},
		{"set replaces non-objects", "apply", nil, []agents.StateOp{agents.Set{Values: map[string]any{"m": 5}}},
			`{"a":1,"box":{"k":"v"},"m":5}`},
		{"replace", "apply", nil, []agents.StateOp{agents.Replace{State: map[string]any{"only": true}}}, `{"only":true}`},
		{"delete keys", "apply", nil, []agents.StateOp{agents.DeleteKeys{Keys: []string{"a", "absent"}}}, `{"box":{"k":"v"},"m":{"x":1,"y":{"z":1}}}`},
		{"set path creates objects", "apply", nil, []agents.StateOp{agents.SetPath{Path: []string{"n", "p", "q"}, Value: []int{1, 2}}},
			`{"a":1,"box":{"k":"v"},"m":{"x":1,"y":{"z":1}},"n":{"p":{"q":[1,2]}}}`},
		{"set path through a number fails", "apply", nil, []agents.StateOp{agents.SetPath{Path: []string{"a", "b"}, Value: 1}}, `error: member "a" holds a number`},
		{"set path with an empty path fails", "apply", nil, []agents.StateOp{agents.SetPath{}}, `error: path is empty`},
		{"set path of NaN-free structs", "apply", nil, []agents.StateOp{agents.SetPath{Path: []string{"s"}, Value: struct{ X int }{7}}},
			`{"a":1,"box":{"k":"v"},"m":{"x":1,"y":{"z":1}},"s":{"X":7}}`},
		{"delete path", "apply", nil, []agents.StateOp{agents.DeletePath{Path: []string{"m", "y", "z"}}}, `{"a":1,"box":{"k":"v"},"m":{"x":1,"y":{}}}`},
		{"delete a missing path is a no-op", "apply", nil, []agents.StateOp{agents.DeletePath{Path: []string{"m", "nope", "z"}}}, `{"a":1,"box":{"k":"v"},"m":{"x":1,"y":{"z":1}}}`},
		{"ops apply in order", "apply", nil, []agents.StateOp{
			agents.SetPath{Path: []string{"a"}, Value: 10},
			agents.Set{Values: map[string]any{"a": 20}},
			agents.DeleteKeys{Keys: []string{"m"}},
			agents.SetPath{Path: []string{"m", "again"}, Value: "yes"},
		}, `{"a":20,"box":{"k":"v"},"m":{"again":"yes"}}`},
		{"new state first, then ops", "apply", agents.State{"fresh": 1}, []agents.StateOp{agents.SetPath{Path: []string{"more"}, Value: 2}}, `{"fresh":1,"more":2}`},
		{"one failing op discards the result", "apply", nil, []agents.StateOp{agents.SetPath{Path: []string{"ok"}, Value: 1}, nil}, `error: state operation 1 is nil`},
		{"unencodable values fail", "apply", nil, []agents.StateOp{agents.SetPath{Path: []string{"f"}, Value: func() {}}}, `error: unsupported type`},
		// In a skill, every path is relative to its state key.
		{"skill set", "box.apply", nil, []agents.StateOp{agents.Set{Values: map[string]any{"n": 1}}}, `{"a":1,"box":{"k":"v","n":1},"m":{"x":1,"y":{"z":1}}}`},
		{"skill replace", "box.apply", nil, []agents.StateOp{agents.Replace{State: map[string]any{"r": 1}}}, `{"a":1,"box":{"r":1},"m":{"x":1,"y":{"z":1}}}`},
		{"skill new state", "box.apply", agents.State{"s": 1}, nil, `{"a":1,"box":{"s":1},"m":{"x":1,"y":{"z":1}}}`},
		{"skill delete keys", "box.apply", nil, []agents.StateOp{agents.DeleteKeys{Keys: []string{"k"}}}, `{"a":1,"box":{},"m":{"x":1,"y":{"z":1}}}`},
		{"skill set path", "box.apply", nil, []agents.StateOp{agents.SetPath{Path: []string{"p", "q"}, Value: true}}, `{"a":1,"box":{"k":"v","p":{"q":true}},"m":{"x":1,"y":{"z":1}}}`},
		{"skill delete path", "box.apply", nil, []agents.StateOp{agents.DeletePath{Path: []string{"k"}}}, `{"a":1,"box":{},"m":{"x":1,"y":{"z":1}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ops, ns := tt.ops, tt.newState
			a := opsAgent(t, &ops, &ns)
			before, _ := agents.EncodeState(a.State)
			next, dirs := agents.Cmd(a, agents.Instruction{Action: tt.action})
			after, _ := agents.EncodeState(next.State)
			if again, _ := agents.EncodeState(a.State); string(again) != string(before) {
				t.Fatalf("Cmd modified the agent it was given: %s became %s", before, again)
			}
			if msg, isErr := strings.CutPrefix(tt.want, "error: "); isErr {
				if len(dirs) != 1 || string(after) != string(before) {
					t.Fatalf("want one Error and no change; got %d directives, state %s", len(dirs), after)
				}
				e, ok := dirs[0].(agents.Error)
				if !ok || e.Context != agents.ContextState || !strings.Contains(e.Err.Message, msg) {
					t.Errorf("directive = %#v, want an Error in context state containing %q", dirs[0], msg)
				}
				return
			}
			if len(dirs) != 0 {
				t.Fatalf("unexpected directives %#v", dirs)
			}
			if string(after) != tt.want {
				t.Errorf("state = %s, want %s", after, tt.want)
			}
		})
	}
}

func TestStateAccessors(t *testing.T) {
	s := agents.State{"n": 2.5, "s": "x", "o": map[string]any{"p": map[string]any{"q": 1.0}}, "l": []any{1.0}}
	if s.Number("n") != 2.5 || s.Number("s") != 0 || s.String("s") != "x" || s.String("n") != "" {
		t.Error("Number/String")
	}
	if v, ok := s.Get("o", "p", "q"); !ok || v != 1.0 {
		t.Errorf("Get = %v, %v", v, ok)
	}
	if _, ok := s.Get("o", "nope"); ok {
		t.Error("Get of a missing path succeeded")
	}
	if _, ok := s.Get("n", "x"); ok {
		t.Error("Get through a number succeeded")
	}
	if s.Object("o").Object("p").Number("q") != 1 || s.Object("n") != nil || len(s.List("l")) != 1 || s.List("n") != nil {
		t.Error("Object/List")
	}
	type typed struct {
		N float64 `json:"n"`
		S string  `json:"s"`
	}
	got, err := agents.Decode[typed](s)
	if err != nil || got != (typed{2.5, "x"}) {
		t.Errorf("Decode = %+v, %v", got, err)
	}
	back, err := agents.DecodeState([]byte(`{"a":[1,{"b":null}]}`))
	if err != nil || back.List("a")[0] != 1.0 {
		t.Errorf("DecodeState = %v, %v", back, err)
	}
	if _, err := agents.DecodeState([]byte(`null`)); err == nil {
		t.Error("DecodeState(null) succeeded")
	}
}
