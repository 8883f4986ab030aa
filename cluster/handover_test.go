package cluster

import (
	"testing"

	"github.com/jido-bus/jido-bus/internal/testkit"
)

// TestJoinHandsOverInOrder: a third member joins two; the partitions HRW
// gives it move by orderly hand-over: the old owner's OnRelease returns
// before the new owner's OnAcquire is called, and no member's Owns says
// true for a partition another has acquired (checked in every OnAcquire).
func TestJoinHandsOverInOrder(t *testing.T) {
	const P = 24
	r := newRecorder(t)
	prefix := newPrefix()
	a := r.join(r.options(prefix, "n1", P))
	b := r.join(r.options(prefix, "n2", P))
	testkit.EventuallyNil(t, "two members own every partition", func() error { return assigned(P, a, b) })
	before := ownersNow(P, a, b)
	c := r.join(r.options(prefix, "n3", P))
	testkit.EventuallyNil(t, "three members own every partition", func() error { return assigned(P, a, b, c) })

	events, moves := r.snapshot()
	moved := 0
	for p := range P {
		if !c.Owns(p) {
			continue
		}
		moved++
		old := before[p][0]
		rel, acq := lastEvent(events, old, p, false), lastEvent(events, "n3", p, true)
		if rel == 0 || acq == 0 || rel > acq {
			t.Errorf("partition %d: %s released it at #%d, n3 acquired it at #%d; want the release first", p, old, rel, acq)
		}
	}
	if moved == 0 {
		t.Fatalf("n3 took no partition of %d", P)
	}
	handOvers := 0
	for _, mv := range moves {
		if mv.Reason == MoveHandOver && mv.To == "" {
			handOvers++
		}
		if mv.Reason == MoveFailover || mv.Reason == MoveFenced || mv.Reason == MoveLost {
			t.Errorf("unexpected move %+v: nothing died", mv)
		}
	}
	if handOvers != moved {
		t.Errorf("%d hand-overs reported, %d partitions moved to n3", handOvers, moved)
	}
}
