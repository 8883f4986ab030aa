package projections

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jido-bus/jido-bus/internal/testkit"
)

// TestCatchUpEndsOnALogWithNothingSelected is issue 11 defect 13: on a log
// where no entry matches the projections' type filter, CatchUp (and so
// `projection rebuild`) waited forever for an entry that would never come.
func TestCatchUpEndsOnALogWithNothingSelected(t *testing.T) {
	dir := t.TempDir()
	l := openLog(t, dir)
	defer l.Close()
	s := openStore(t, dir)
	defer s.Close()
	for i := range 5 {
		if _, err := l.Append(context.Background(), fmt.Sprintf("agent/c%d", i), 0, testSig("other.ev", fmt.Sprintf("o%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	// tally and total share test.**, so the subscription itself filters.
	r, err := NewRunner(l, s, Options{}, MustDefine[*tallyState](tally{}), MustDefine[*tallyState](total{}))
	if err != nil {
		t.Fatal(err)
	}
	catchUp := func(what string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		var last Progress
		if err := r.CatchUp(ctx, func(p Progress) { last = p }); err != nil {
			t.Fatalf("%s: CatchUp: %v", what, err)
		}
		if last.Position != l.Durable() {
			t.Errorf("%s: last progress %+v, want position %d", what, last, l.Durable())
		}
		for _, st := range r.Status() {
			if st.Lag != 0 || st.Position != l.Durable() || st.Checkpoint != l.Durable() || st.Rebuilding {
				t.Errorf("%s: status %+v", what, st)
			}
		}
	}
	catchUp("first catch-up")
	if err := r.Rebuild("tally"); err != nil {
		t.Fatal(err)
	}
	catchUp("rebuild")
}

// TestFollowAdvancesPastUnselectedEntries is issue 11 defect 14: entries
// appended after the last one a projection selects left its lag above
// zero for good. Position must reach the head once the runner is idle,
// without a checkpoint written per skipped run: the position is committed
// with the next state change, or when Run ends.
func TestFollowAdvancesPastUnselectedEntries(t *testing.T) {
	for _, shared := range []bool{true, false} {
		t.Run(fmt.Sprintf("subscription-filters=%v", shared), func(t *testing.T) {
			dir := t.TempDir()
			l := openLog(t, dir)
			defer l.Close()
			s := openStore(t, dir)
			defer s.Close()
			defs := []Definition{MustDefine[*tallyState](tally{})}
			if shared {
				defs = append(defs, MustDefine[*tallyState](total{}))
			} else {
				defs = append(defs, MustDefine[*tallyState](elsewhere{}))
			}
			r, err := NewRunner(l, s, Options{}, defs...)
			if err != nil {
				t.Fatal(err)
			}
			stop := runInBackground(t, r)
			defer stop()
			appendRound(t, l, 0, 3)
			testkit.Eventually(t, "catch-up", caughtUp(r))
			selected := l.Durable()
			for i := range 5 {
				if _, err := l.Append(context.Background(), "agent/counter", 0, testSig("other.ev", fmt.Sprintf("o%d", i))); err != nil {
					t.Fatal(err)
				}
				testkit.Eventually(t, "lag 0 after an unselected entry", func() bool {
					st := r.Status()
					return st[0].Lag == 0 && st[0].Position == l.Durable()
				})
			}
			if st := r.Status()[0]; st.Checkpoint != selected {
				t.Errorf("checkpoint moved to %d for unselected entries only (want it kept at %d until Run ends)", st.Checkpoint, selected)
			}
			stop()
			if cp, _, _ := s.Checkpoint("tally"); cp.Position != l.Durable() {
				t.Errorf("checkpoint after Run ended: %+v, want position %d", cp, l.Durable())
			}
		})
	}
}

// elsewhere selects a type pattern of its own, so that the runner's
// subscription cannot filter by type and every entry reaches the fold.
type elsewhere struct{ total }

func (elsewhere) Name() string       { return "elsewhere" }
func (elsewhere) Selector() Selector { return Selector{Types: "unused.**"} }
