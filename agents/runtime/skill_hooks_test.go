package runtime

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/jido-bus/jido-bus/agents"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/jido-bus/jido-bus/internal/testkit"
)

// greetSkill uses every hook of a skill: Mount fills its state from the
// config when the runtime starts an agent, Router adds a route the config
// names, HandleSignal rewrites the signal before routing and
// TransformResult adds a directive to what the action returned.
func greetSkill() agents.Skill {
	return agents.Skill{
		Name: "greet", StateKey: "greet",
		Schema:         `{"properties":{"greeting":{"type":"string","default":""},"said":{"type":"string","default":""}}}`,
		ConfigSchema:   `{"properties":{"greeting":{"type":"string","default":"hello"},"verb":{"type":"string","default":"greet"}}}`,
		SignalPatterns: []string{"greet.**"},
		Mount: func(s agents.State, cfg map[string]any) (agents.State, error) {
			return agents.State{"greeting": cfg["greeting"], "said": s.String("said")}, nil
		},
		Router: func(cfg map[string]any) []agents.Route {
			return []agents.Route{{Pattern: "greet." + cfg["verb"].(string), Action: "say"}}
		},
		Actions: []agents.Action{{Name: "say", Run: agents.Typed(func(env agents.Env, p struct {
			Name string `json:"name"`
		}) (agents.Result, error) {
			text := env.State.String("greeting") + " " + p.Name
			e, err := agents.NewEmit("greet.said", map[string]string{"text": text})
			return agents.Result{Ops: []agents.StateOp{agents.Set{Values: map[string]any{"said": text}}}, Directives: []agents.Directive{e}}, err
		})}},
		HandleSignal: func(sig bus.Signal, _ map[string]any) (bus.Signal, error) {
			var p map[string]string
			if err := json.Unmarshal(sig.Data(), &p); err != nil {
				return sig, err
			}
			p["name"] = strings.ToUpper(p["name"])
			return sig, bus.SetJSONData(&sig, p)
		},
		TransformResult: func(_ bus.Signal, dirs []agents.Directive, _ map[string]any) ([]agents.Directive, error) {
			e, err := agents.NewEmit("greet.transformed", map[string]int{"directives": len(dirs)})
			return append(dirs, e), err
		},
	}
}

// TestSkillHooksThroughTheRuntime: a skill's hooks run where seed 002
// puts them, in a running agent — Mount when the runtime starts it, the
// Router's route reached by a signal, HandleSignal and TransformResult
// on that signal's way — and the agent's stream replays to the same
// state and directives, with the hooks, after a restart too.
func TestSkillHooksThroughTheRuntime(t *testing.T) {
	h := newHarness(t, func(cfg *Config) {
		def, err := agents.Define(agents.Spec{Name: "greeter", Skills: []agents.Attachment{
			agents.Use(greetSkill(), map[string]any{"greeting": "hi", "verb": "wave"}),
		}})
		if err != nil {
			t.Fatal(err)
		}
		if err := cfg.Types.Register(def); err != nil {
			t.Fatal(err)
		}
	})
	h.start("greeter", "g", Options{})
	if got := h.state("g")["greet"].(map[string]any)["greeting"]; got != "hi" {
		t.Fatalf("greeting %v: Mount did not run at start", got)
	}
	r := h.mustCall("g", "greet.wave", map[string]string{"name": "ann"})
	if said := stateOf(t, r.State)["greet"].(map[string]any)["said"]; said != "hi ANN" {
		t.Fatalf("said %v, want hi ANN (the router's route, the signal rewritten)", said)
	}
	if _, err := h.call("g", "greet.greet", map[string]string{"name": "bob"}); bus.ErrorType(err) != agents.ReasonNoRoute {
		t.Fatalf("the default verb, not configured: %v, want no_route", err)
	}
	// Emits run after the call is answered: wait for both.
	testkit.Eventually(t, "both emits", func() bool {
		return len(h.emittedOf("greet.said")) > 0 && len(h.emittedOf("greet.transformed")) > 0
	})
	said, transformed := h.emittedOf("greet.said"), h.emittedOf("greet.transformed")
	if len(said) != 1 || string(said[0].Data()) != `{"text":"hi ANN"}` || len(transformed) != 1 || string(transformed[0].Data()) != `{"directives":1}` {
		t.Fatalf("emitted said %v, transformed %v", said, transformed)
	}

	h.restart()
	if said := h.state("g")["greet"].(map[string]any)["said"]; said != "hi ANN" {
		t.Fatalf("after a restart, said %v", said)
	}
	res, err := Replay(h.log.ReadStream("agent/g", eventlog.ReadOptions{}), h.cfg.Types, h.cfg.Directives, ReplayOptions{Verify: true})
	if err != nil || res.Divergence != nil {
		t.Fatalf("replay --verify: %+v %v", res, err)
	}
}
