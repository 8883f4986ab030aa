package agents_test

import (
	"encoding/json"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/jido-bus/jido-bus/agents"
	"github.com/jido-bus/jido-bus/bus"
)

// hasError reports whether dirs hold an Error directive.
func hasError(dirs []agents.Directive) bool {
	for _, d := range dirs {
		if _, ok := d.(agents.Error); ok {
			return true
		}
	}
	return false
}

// logged is the agent's state as the log keeps it.
func logged(t interface{ Fatalf(string, ...any) }, a agents.Agent) string {
	b, err := agents.EncodeState(a.State)
	if err != nil {
		t.Fatalf("state does not encode: %v", err)
	}
	return string(b)
}

// TestReplayPropertyFoldsLikeStep: for arbitrary signals (routed and not,
// arbitrary params) on the built-in and test agents, Replay told the truth
// about the step's errors leaves the same state as Step, step after step.
func TestReplayPropertyFoldsLikeStep(t *testing.T) {
	reg := testTypes(t)
	if err := reg.Register(hookedCounter(t)); err != nil {
		t.Fatal(err)
	}
	names := reg.Names()
	rapid.Check(t, func(t *rapid.T) {
		def, _ := reg.Lookup(rapid.SampledFrom(names).Draw(t, "type"))
		stepped, err := def.New("a1", nil)
		if err != nil {
			t.Fatal(err)
		}
		replayed := stepped
		var types []string
		for _, r := range def.Routes() {
			types = append(types, strings.ReplaceAll(strings.ReplaceAll(r.Pattern, "**", "x"), "*", "y"))
		}
		types = append(types, "unrouted.signal")
		for i := range rapid.IntRange(1, 8).Draw(t, "n") {
			sig, err := agents.NewSignal(rapid.SampledFrom(types).Draw(t, "type"), nil)
			if err != nil {
				t.Fatal(err)
			}
			sig.SetID("s" + string(rune('a'+i)))
			sig.SetSource("test")
			sig.DataEncoded = []byte(paramsGen().Draw(t, "params"))
			next, dirs := agents.Step(stepped, sig)
			again := agents.Replay(replayed, sig, agents.ReplayOptions{NoErrors: !hasError(dirs)})
			if s, r := logged(t, next), logged(t, again); s != r {
				t.Fatalf("signal %d (%s %s): Step left %s, Replay %s", i, sig.Type(), sig.Data(), s, r)
			}
			stepped, replayed = next, again
		}
	})
}

// hookedCounter is a counter whose skill's TransformResult hook drops
// every Error directive, so that its decisions never show one.
func hookedCounter(t testing.TB) *agents.Definition {
	t.Helper()
	def, err := agents.Define(agents.Spec{
		Name: "quiet-counter",
		Skills: []agents.Attachment{agents.Use(agents.Skill{
			Name: "tally", StateKey: "tally",
			Schema:         `{"properties":{"n":{"type":"number","default":0}}}`,
			SignalPatterns: []string{"tally.**"},
			Actions: []agents.Action{{
				Name: "add", Params: `{"type":"object","properties":{"by":{"type":"integer"}},"required":["by"]}`,
				Run: func(env agents.Env, params json.RawMessage) (agents.Result, error) {
					var p struct{ By float64 }
					_ = json.Unmarshal(params, &p)
					return agents.Result{Ops: []agents.StateOp{agents.SetPath{Path: []string{"n"}, Value: env.State.Number("n") + p.By}}}, nil
				},
			}},
			Routes: []agents.Route{{Pattern: "tally.add", Action: "add"}},
			TransformResult: func(_ bus.Signal, dirs []agents.Directive, _ map[string]any) ([]agents.Directive, error) {
				var kept []agents.Directive
				for _, d := range dirs {
					if _, ok := d.(agents.Error); !ok {
						kept = append(kept, d)
					}
				}
				return kept, nil
			},
		}, nil)},
	})
	if err != nil {
		t.Fatal(err)
	}
	return def
}

// TestReplaySkipsValidationOnlyWhereSound: NoErrors spares validating
// params — an action then runs on params the schema would refuse, which a
// truthful NoErrors never lets happen — except on an agent type whose
// TransformResult hooks could have hidden the Error that refused them.
func TestReplaySkipsValidationOnlyWhereSound(t *testing.T) {
	reg := testTypes(t)
	machine, _ := reg.Lookup("machine")
	a, err := machine.New("m", nil)
	if err != nil {
		t.Fatal(err)
	}
	// move requires "to"; without it the action moves to "".
	bad := signal(t, "machine.move", "s1", `{}`)
	if _, dirs := agents.Step(a, bad); !hasError(dirs) {
		t.Fatalf("Step accepted params its schema refuses: %#v", dirs)
	}
	checked := agents.Replay(a, bad, agents.ReplayOptions{})
	if logged(t, checked) != logged(t, a) {
		t.Errorf("Replay without NoErrors ran the action on refused params: %s", logged(t, checked))
	}
	trusted := agents.Replay(a, bad, agents.ReplayOptions{NoErrors: true})
	if logged(t, trusted) == logged(t, a) {
		t.Error("Replay with NoErrors validated the params again")
	}

	quiet, err := hookedCounter(t).New("q", nil)
	if err != nil {
		t.Fatal(err)
	}
	refused := signal(t, "tally.add", "s2", `{"by":2.5}`) // not an integer
	next, dirs := agents.Step(quiet, refused)
	if hasError(dirs) {
		t.Fatalf("the hook left an Error directive: %#v", dirs)
	}
	again := agents.Replay(quiet, refused, agents.ReplayOptions{NoErrors: true})
	if s, r := logged(t, next), logged(t, again); s != r {
		t.Errorf("behind a TransformResult hook, Replay with NoErrors left %s, Step %s", r, s)
	}
}

// TestReplayWithoutDefinition: an agent not made by a Definition replays
// to itself, as Step leaves it.
func TestReplayWithoutDefinition(t *testing.T) {
	a := agents.Agent{ID: "zero", State: agents.State{"k": 1.0}}
	got := agents.Replay(a, signal(t, "x.y", "s", `{}`), agents.ReplayOptions{NoErrors: true})
	if logged(t, got) != `{"k":1}` {
		t.Errorf("Replay changed a definitionless agent: %s", logged(t, got))
	}
}
