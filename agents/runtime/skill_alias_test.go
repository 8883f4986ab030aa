package runtime

import (
	"encoding/json"
	"maps"
	"testing"

	"github.com/jido-bus/jido-bus/agents"
	"github.com/jido-bus/jido-bus/internal/testkit"
)

// poolSkill asks for one child, tagged "worker", and has an action that
// stops it: a skill that owns its children end to end.
func poolSkill() agents.Skill {
	return agents.Skill{
		Name: "pool", StateKey: "pool",
		ChildSpecs: func(map[string]any) []agents.SpawnAgent {
			return []agents.SpawnAgent{{Type: "probe", Tag: "worker"}}
		},
		Actions: []agents.Action{{Name: "retire", Run: func(env agents.Env, _ json.RawMessage) (agents.Result, error) {
			return agents.Result{Directives: []agents.Directive{agents.StopChild{Tag: env.ChildTag("worker"), Reason: "retired"}}}, nil
		}}},
		Routes: []agents.Route{{Pattern: "pool.retire", Action: "retire"}},
	}
}

// TestSkillWithChildSpecsUnderTwoAliases: an agent with one skill
// attached twice under two aliases starts with two children, one per
// copy (the old code refused the type: "child tag used twice"), and each
// copy's action reaches its own child.
func TestSkillWithChildSpecsUnderTwoAliases(t *testing.T) {
	h := newHarness(t, func(cfg *Config) {
		def, err := agents.Define(agents.Spec{Name: "pools", Skills: []agents.Attachment{
			agents.UseAs(poolSkill(), "left", nil),
			agents.UseAs(poolSkill(), "right", nil),
		}})
		if err != nil {
			t.Fatal(err)
		}
		if err := cfg.Types.Register(def); err != nil {
			t.Fatal(err)
		}
	})
	h.start("pools", "p", Options{})
	want := map[string]string{"left-worker": "p/left-worker", "right-worker": "p/right-worker"}
	testkit.Eventually(t, "both children started", func() bool {
		info, err := h.rt.State("p")
		return err == nil && maps.Equal(info.Children, want)
	})
	for _, id := range want {
		if info, err := h.rt.State(id); err != nil || info.Status != StatusRunning {
			t.Fatalf("child %s: %+v, %v", id, info, err)
		}
	}

	h.mustCall("p", "left.retire", nil)
	testkit.Eventually(t, "the left copy's child stopped", func() bool {
		info, err := h.rt.State("p")
		return err == nil && maps.Equal(info.Children, map[string]string{"right-worker": "p/right-worker"})
	})
	if info, err := h.rt.State("p/right-worker"); err != nil || info.Status != StatusRunning {
		t.Fatalf("the right copy's child: %+v, %v", info, err)
	}
}
