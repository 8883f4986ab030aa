//go:build !race

package runtime

import "testing"

// decideBudget is the most allocations deciding a counter signal may make
// (BenchmarkDecide): 15 on 2026-11-28, where it was 53 — the state's copy,
// the emitted signal (its context, data, extensions, id), the Emit in its
// Directive and the slice holding it, the counter's result, the cmd
// record's data, attributes and id. A change that allocates more per
// signal fails here, and has to say why in this number.
const decideBudget = 15

// TestDecideAllocationBudget holds deciding a signal to its allocation
// budget. (The race detector allocates on its own: not under -race.)
func TestDecideAllocationBudget(t *testing.T) {
	f := newDecideFixture(t)
	f.decide(t) // the agent's parsed source and the first state are made once
	if n := testing.AllocsPerRun(200, func() { f.decide(t) }); n > decideBudget {
		t.Fatalf("deciding a signal made %.1f allocations, the budget is %d (go test -run XXX -bench 'Decide$' -benchmem -memprofile m.out ./agents/runtime/ shows where)", n, decideBudget)
	}
}
