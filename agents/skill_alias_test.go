package agents_test

import (
	"slices"
	"testing"

	"github.com/jido-bus/jido-bus/agents"
)

// TestSkillChildTagsUnderAliases: a skill with child specs attached twice,
// under two aliases, asks for two children, their tags prefixed with the
// alias as its routes are; attached without an alias its tags are as
// written, so agents defined before aliases prefixed tags keep theirs.
func TestSkillChildTagsUnderAliases(t *testing.T) {
	pool := skill("pool", "pool", "x")
	pool.ChildSpecs = func(map[string]any) []agents.SpawnAgent {
		return []agents.SpawnAgent{{Type: "counter", Tag: "worker"}, {Type: "counter", Tag: "pool"}}
	}
	tests := []struct {
		name   string
		skills []agents.Attachment
		want   []string
	}{
		{"no alias", []agents.Attachment{agents.Use(pool, nil)}, []string{"worker", "pool"}},
		{"one alias", []agents.Attachment{agents.UseAs(pool, "left", nil)}, []string{"left-worker", "left-pool"}},
		{"two aliases", []agents.Attachment{agents.UseAs(pool, "left", nil), agents.UseAs(pool, "right", nil)}, []string{"left-worker", "left-pool", "right-worker", "right-pool"}},
		{"once plain, once aliased", []agents.Attachment{agents.Use(pool, nil), agents.UseAs(pool, "spare", nil)}, []string{"worker", "pool", "spare-worker", "spare-pool"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			def, err := agents.Define(agents.Spec{Name: "pools", Skills: tt.skills})
			if err != nil {
				t.Fatal(err)
			}
			var tags []string
			for _, c := range def.ChildSpecs() {
				tags = append(tags, c.Tag)
			}
			if !slices.Equal(tags, tt.want) {
				t.Errorf("child tags %q, want %q", tags, tt.want)
			}
		})
	}
}
