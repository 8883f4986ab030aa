package agents_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/jido-bus/jido-bus/agents"
	"github.com/jido-bus/jido-bus/agents/builtin"
)

// TestEmittedIDsNameTheInputsSource: two inputs with one id from two
// sources make the same agent emit signals with different ids — a
// consumer deduplicating on source and id keeps both — while the same
// input always derives the same id (replay --verify depends on it), an
// input from the agent itself keeps the plain "<id>.<index>", and a long
// input id does not make a long emitted id.
func TestEmittedIDsNameTheInputsSource(t *testing.T) {
	def, err := builtin.NewCounter()
	if err != nil {
		t.Fatal(err)
	}
	a, err := def.New("c1", nil)
	if err != nil {
		t.Fatal(err)
	}
	emittedID := func(o agents.Origin) string {
		t.Helper()
		in := agents.Instruction{Action: "increment", Params: json.RawMessage(`{"by":1}`), Origin: o}
		_, dirs := agents.Cmd(a, in)
		if len(dirs) != 1 {
			t.Fatalf("%+v: %d directives", o, len(dirs))
		}
		return dirs[0].(agents.Emit).Signal.ID()
	}
	mine := emittedID(agents.Origin{ID: "evt-1", Source: "my-service"})
	other := emittedID(agents.Origin{ID: "evt-1", Source: "other-service"})
	if mine == other {
		t.Fatalf("inputs evt-1 from two sources both emit id %q", mine)
	}
	if again := emittedID(agents.Origin{ID: "evt-1", Source: "my-service"}); again != mine {
		t.Fatalf("the same input emitted %q, then %q", mine, again)
	}
	if !strings.HasPrefix(mine, "evt-1") {
		t.Fatalf("emitted id %q does not begin with its input's id", mine)
	}
	if own := emittedID(agents.Origin{ID: "evt-1", Source: agents.SourceOf("c1")}); own != "evt-1.0" {
		t.Fatalf("input from the agent itself emitted %q, want evt-1.0", own)
	}
	long := strings.Repeat("x", 500)
	l1 := emittedID(agents.Origin{ID: long, Source: "s"})
	l2 := emittedID(agents.Origin{ID: long + "y", Source: "s"})
	if len(l1) > 100 || l1 == l2 {
		t.Fatalf("long input ids emitted %q and %q", l1, l2)
	}
}
