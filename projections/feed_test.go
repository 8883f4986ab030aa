package projections

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/jido-bus/jido-bus/internal/testkit"
)

// seqMemo is what prepared reads: the entry's global sequence, computed
// once per entry however many projections ask.
var (
	seqMemoCalls atomic.Int64
	seqMemo      = NewMemo(func(e *eventlog.Entry) uint64 {
		seqMemoCalls.Add(1)
		return e.GlobalSeq
	})
)

// prepared is tally through a Memo its Prepare fills ahead of Apply.
type prepared struct{ tally }

func (prepared) Name() string     { return "prepared" }
func (prepared) Prepare(e *Entry) { seqMemo.Of(e) }
func (p prepared) Apply(s *tallyState, e *Entry) *tallyState {
	if seq := seqMemo.Of(e); seq != e.GlobalSeq {
		panic(fmt.Sprintf("memo gave %d for entry %d", seq, e.GlobalSeq))
	}
	return p.tally.Apply(s, e)
}

// panicky's Prepare panics; Apply does the work, so folds are unharmed.
type panicky struct{ tally }

func (panicky) Name() string     { return "panicky" }
func (panicky) Prepare(e *Entry) { panic("prepare failed") }

// TestPreparedFoldsAcrossBatches folds more entries than the feed hands
// over at a time, through projections that prepare entries ahead (one of
// them panicking), and checks every state against the log.
func TestPreparedFoldsAcrossBatches(t *testing.T) {
	dir := t.TempDir()
	l := openLog(t, dir)
	defer l.Close()
	s := openStore(t, dir)
	defer s.Close()
	const rounds, keys = 3 * feedBatchLen / 10, 10
	for round := range rounds {
		appendRound(t, l, round, keys)
	}
	seqMemoCalls.Store(0)
	r, err := NewRunner(l, s, Options{CacheStates: 3, CheckpointEvery: 101},
		MustDefine[*tallyState](tally{}), MustDefine[*tallyState](prepared{}), MustDefine[*tallyState](panicky{}))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.CatchUp(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if got := seqMemoCalls.Load(); got != rounds*keys {
		t.Errorf("memo computed %d times for %d entries", got, rounds*keys)
	}
	for _, name := range []string{"tally", "prepared", "panicky"} {
		for k := range keys {
			st, err := r.Get(name, fmt.Sprintf("k%d", k))
			if err != nil {
				t.Fatal(err)
			}
			got := decodeTally(t, st.State)
			if got.Count != rounds || got.Bad != 0 {
				t.Errorf("%s k%d: %+v", name, k, got)
			}
		}
	}
	// Followed live, the feed hands over what it has whenever it reaches
	// the head, and the states keep up.
	stop := runInBackground(t, r)
	defer stop()
	for round := rounds; round < rounds+5; round++ {
		appendRound(t, l, round, keys)
		testkit.Eventually(t, "follow", caughtUp(r))
	}
	expectTallies(t, r, l)
}

// recycledSeq is a value of recycledMemo: the entry's global sequence,
// and whether the Runner has handed it back.
type recycledSeq struct {
	seq      uint64
	recycled bool
}

var (
	recycledNew, recycledBack atomic.Int64
	recycledMemo              = NewRecycledMemo(func(e *eventlog.Entry) *recycledSeq {
		recycledNew.Add(1)
		return &recycledSeq{seq: e.GlobalSeq}
	}, func(v *recycledSeq) {
		if v.recycled {
			panic(fmt.Sprintf("value of entry %d recycled twice", v.seq))
		}
		v.recycled = true
		recycledBack.Add(1)
	})
)

// recycling is tally through a recycled Memo: Apply panics if it is given
// a value already handed back, or another entry's.
type recycling struct{ tally }

func (recycling) Name() string     { return "recycling" }
func (recycling) Prepare(e *Entry) { recycledMemo.Of(e) }
func (p recycling) Apply(s *tallyState, e *Entry) *tallyState {
	if v := recycledMemo.Of(e); v.recycled || v.seq != e.GlobalSeq {
		panic(fmt.Sprintf("entry %d given %+v", e.GlobalSeq, *v))
	}
	return p.tally.Apply(s, e)
}

// TestRecycledMemoValuesComeBackAfterTheFold checks that a Runner hands
// every value of a recycled Memo back once, after every projection has
// folded its entry, and never before.
func TestRecycledMemoValuesComeBackAfterTheFold(t *testing.T) {
	dir := t.TempDir()
	l := openLog(t, dir)
	defer l.Close()
	s := openStore(t, dir)
	defer s.Close()
	const rounds, keys = 3 * feedBatchLen / 10, 10
	for round := range rounds {
		appendRound(t, l, round, keys)
	}
	recycledNew.Store(0)
	recycledBack.Store(0)
	r, err := NewRunner(l, s, Options{CacheStates: 3, CheckpointEvery: 101},
		MustDefine[*tallyState](recycling{}), MustDefine[*tallyState](prepared{}))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.CatchUp(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if n, back := recycledNew.Load(), recycledBack.Load(); n != rounds*keys || back != n {
		t.Errorf("%d values for %d entries, %d handed back", n, rounds*keys, back)
	}
	for k := range keys {
		st, err := r.Get("recycling", fmt.Sprintf("k%d", k))
		if err != nil {
			t.Fatal(err)
		}
		if got := decodeTally(t, st.State); got.Count != rounds || got.Bad != 0 {
			t.Errorf("recycling k%d: %+v", k, got)
		}
	}
}

func TestAbsentHasEveryAddedKey(t *testing.T) {
	a := newAbsent()
	for i := range 200_000 {
		if i%2 == 0 {
			a.add(fmt.Sprintf("p%d/c%d", i%10, i))
		}
	}
	false1 := 0
	for i := range 200_000 {
		has := a.has(fmt.Sprintf("p%d/c%d", i%10, i))
		switch {
		case i%2 == 0 && !has:
			t.Fatalf("key %d added but not found", i)
		case i%2 == 1 && has:
			false1++
		}
	}
	// 100,000 keys in 2^20 bits with four probes: about 1.2% false
	// positives; far more means the probes are not independent.
	if false1 > 3_000 {
		t.Errorf("%d false positives in 100,000", false1)
	}
}
