package agents_test

import (
	"encoding/json"
	"testing"

	"github.com/jido-bus/jido-bus/agents"
	"github.com/jido-bus/jido-bus/agents/builtin"
)

// TestEmittedSourceFollowsID: the source of emitted signals is the
// agent's id at the time of the call, also when a caller changes ID on an
// agent value after New.
func TestEmittedSourceFollowsID(t *testing.T) {
	def, err := builtin.NewCounter()
	if err != nil {
		t.Fatal(err)
	}
	a, err := def.New("first", nil)
	if err != nil {
		t.Fatal(err)
	}
	in := agents.Instruction{Action: "increment", Params: json.RawMessage(`{"by":1}`), Origin: agents.Origin{ID: "s"}}
	for _, id := range []string{"first", "second", "second", "team/third"} {
		a.ID = id
		var dirs []agents.Directive
		a, dirs = agents.Cmd(a, in)
		if len(dirs) != 1 {
			t.Fatalf("%s: %d directives", id, len(dirs))
		}
		if got, want := dirs[0].(agents.Emit).Signal.Source(), agents.SourceOf(id); got != want {
			t.Errorf("agent %s emitted with source %q, want %q", id, got, want)
		}
	}
}
