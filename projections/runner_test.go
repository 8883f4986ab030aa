package projections

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/jido-bus/jido-bus/internal/testkit"
)

// runInBackground starts r.Run and returns a function that stops it and
// reports its error.
func runInBackground(t *testing.T, r *Runner) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var runErr error
	wg.Go(func() { runErr = r.Run(ctx) })
	var once sync.Once
	return func() {
		once.Do(func() {
			cancel()
			wg.Wait()
			if runErr != nil {
				t.Errorf("Run: %v", runErr)
			}
		})
	}
}

func caughtUp(r *Runner) func() bool {
	return func() bool {
		for _, st := range r.Status() {
			if st.Lag > 0 || st.Checkpoint < st.Head || st.Rebuilding {
				return false
			}
		}
		return true
	}
}

func TestRunnerCatchesUpThenFollows(t *testing.T) {
	dir := t.TempDir()
	l := openLog(t, dir)
	defer l.Close()
	s := openStore(t, dir)
	defer s.Close()
	for round := range 20 {
		appendRound(t, l, round, 10)
	}
	// Entries the projections do not select: another stream prefix, and
	// bookkeeping types inside a selected stream.
	if _, err := l.Append(context.Background(), "other/x", 0, testSig("test.ev", "o1")); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append(context.Background(), "t/k0", 0, testSig("jido.directive", "j1")); err != nil {
		t.Fatal(err)
	}
	r, err := NewRunner(l, s, Options{CacheStates: 4, CheckpointEvery: 7}, MustDefine[*tallyState](tally{}), MustDefine[*tallyState](total{}))
	if err != nil {
		t.Fatal(err)
	}
	stop := runInBackground(t, r)
	defer stop()
	testkit.Eventually(t, "catch-up", caughtUp(r))
	expectTallies(t, r, l)

	for round := 20; round < 30; round++ {
		appendRound(t, l, round, 12) // two new keys
	}
	testkit.Eventually(t, "follow", caughtUp(r))
	expectTallies(t, r, l)
	st := r.Status()
	if st[0].Name != "tally" || st[0].Keys != 12 || st[0].Applied != 20*10+10*12 || !st[0].Running {
		t.Errorf("tally status %+v", st[0])
	}
	tot, err := r.Get("total", "")
	if err != nil {
		t.Fatal(err)
	}
	// total selects every stream, so it counts other/x too, but not jido.*.
	if got := decodeTally(t, tot.State); got.Count != 20*10+10*12+1 || got.Bad != 0 {
		t.Errorf("total %+v", got)
	}
	if _, err := r.Get("tally", "k99"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get of a missing key: %v", err)
	}
	if _, err := r.Get("nope", "k1"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get of a missing projection: %v", err)
	}
	if err := r.CatchUp(context.Background(), nil); !errors.Is(err, ErrRunning) {
		t.Errorf("CatchUp while running: %v", err)
	}
	keys, err := r.Keys("tally", "k1", "", 0)
	if err != nil || len(keys) != 3 || keys[0] != "k1" || keys[1] != "k10" || keys[2] != "k11" {
		t.Errorf("Keys(k1) = %v, %v", keys, err)
	}
	keys, err = r.Keys("tally", "", "k5", 2)
	if err != nil || len(keys) != 2 || keys[0] != "k6" {
		t.Errorf("Keys(after k5, 2) = %v, %v", keys, err)
	}
}

func TestAtFoldsUpToAPastPosition(t *testing.T) {
	dir := t.TempDir()
	l := openLog(t, dir)
	defer l.Close()
	s := openStore(t, dir)
	defer s.Close()
	for round := range 5 {
		appendRound(t, l, round, 3) // global 1..15; k1 has 2, 5, 8, 11, 14
	}
	r, err := NewRunner(l, s, Options{}, MustDefine[*tallyState](tally{}), MustDefine[*tallyState](total{}))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		until Until
		want  tallyState
	}{
		{Until{}, tallyState{Count: 5, Sum: 2 + 5 + 8 + 11 + 14, Last: 14}},
		{Until{GlobalSeq: 9}, tallyState{Count: 3, Sum: 2 + 5 + 8, Last: 8}},
		{Until{GlobalSeq: 8}, tallyState{Count: 3, Sum: 2 + 5 + 8, Last: 8}},
		{Until{Seq: 2}, tallyState{Count: 2, Sum: 2 + 5, Last: 5}},
	}
	for _, tt := range tests {
		st, err := r.At(context.Background(), "tally", "k1", tt.until)
		if err != nil {
			t.Fatal(err)
		}
		if got := decodeTally(t, st.State); got != tt.want || st.Position != tt.want.Last {
			t.Errorf("At(%+v) = %+v at %d, want %+v", tt.until, got, st.Position, tt.want)
		}
	}
	if _, err := r.At(context.Background(), "tally", "k1", Until{GlobalSeq: 1}); !errors.Is(err, ErrNotFound) {
		t.Errorf("At before the key's first entry: %v", err)
	}
	if _, err := r.At(context.Background(), "tally", "nope", Until{}); !errors.Is(err, ErrNotFound) {
		t.Errorf("At of a missing key: %v", err)
	}
	st, err := r.At(context.Background(), "total", "", Until{GlobalSeq: 10})
	if err != nil || decodeTally(t, st.State).Count != 10 {
		t.Errorf("At(total, 10) = %s, %v", st.State, err)
	}
	// At reads the log, not the store: nothing was folded into the store.
	if _, err := r.Get("tally", "k1"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get before any fold: %v", err)
	}
}

func TestRebuildOnDemandAndOnVersionChange(t *testing.T) {
	dir := t.TempDir()
	l := openLog(t, dir)
	defer l.Close()
	s := openStore(t, dir)
	defer s.Close()
	for round := range 10 {
		appendRound(t, l, round, 5)
	}
	r, err := NewRunner(l, s, Options{CacheStates: 2}, MustDefine[*tallyState](tally{}), MustDefine[*tallyState](total{}))
	if err != nil {
		t.Fatal(err)
	}
	stop := runInBackground(t, r)
	defer stop()
	testkit.Eventually(t, "catch-up", caughtUp(r))
	if err := r.Rebuild("tally"); err != nil {
		t.Fatal(err)
	}
	if err := r.Rebuild("nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Rebuild of an unknown projection: %v", err)
	}
	testkit.Eventually(t, "rebuild", caughtUp(r))
	expectTallies(t, r, l) // Bad would count entries folded twice into kept states
	if st := r.Status()[0]; st.Applied != 50 || st.Keys != 5 {
		t.Errorf("after rebuild: %+v", st)
	}
	stop()

	// Same version: the checkpoint is kept, nothing is folded again.
	r, err = NewRunner(l, s, Options{}, MustDefine[*tallyState](tally{}))
	if err != nil {
		t.Fatal(err)
	}
	if st := r.Status()[0]; st.Checkpoint != l.Durable() || st.Rebuilding {
		t.Errorf("reopened: %+v", st)
	}
	// A new version discards the states at once and folds from zero.
	r, err = NewRunner(l, s, Options{}, MustDefine[*tallyState](tally{version: "2"}))
	if err != nil {
		t.Fatal(err)
	}
	if st := r.Status()[0]; st.Checkpoint != 0 || !st.Rebuilding || st.Version != "2" {
		t.Errorf("new version: %+v", st)
	}
	if _, err := r.Get("tally", "k1"); !errors.Is(err, ErrNotFound) {
		t.Errorf("old state survived a version change: %v", err)
	}
	var last Progress
	if err := r.CatchUp(context.Background(), func(p Progress) { last = p }); err != nil {
		t.Fatal(err)
	}
	if last.Position != l.Durable() || last.Target != l.Durable() {
		t.Errorf("last progress %+v", last)
	}
	expectTallies(t, r, l)
	cp, _, _ := s.Checkpoint("tally")
	if cp.Version != "2" || cp.Applied != 50 {
		t.Errorf("checkpoint %+v", cp)
	}
}

func TestDefineRefusesBadProjections(t *testing.T) {
	if _, err := Define[*tallyState](badName{}); err == nil {
		t.Error("a projection named with capitals was accepted")
	}
	if _, err := Define[*tallyState](badTypes{}); err == nil {
		t.Error("a projection with an invalid type pattern was accepted")
	}
	dir := t.TempDir()
	l := openLog(t, dir)
	defer l.Close()
	s := openStore(t, dir)
	defer s.Close()
	if _, err := NewRunner(l, s, Options{}, MustDefine[*tallyState](tally{}), MustDefine[*tallyState](tally{})); err == nil {
		t.Error("two projections with one name were accepted")
	}
}

type badName struct{ tally }

func (badName) Name() string { return "Tally" }

type badTypes struct{ tally }

func (badTypes) Selector() Selector { return Selector{Types: "a..b"} }

func TestLRUEvictsTheLeastRecentlyUsed(t *testing.T) {
	c := newLRU(2)
	c.add("a", 1)
	c.add("b", 2)
	if _, ok := c.get("a"); !ok {
		t.Fatal("a missing")
	}
	_, ev := c.add("c", 3)
	if ev == nil || ev.key != "b" {
		t.Fatalf("evicted %v, want b", ev)
	}
	if _, ok := c.get("b"); ok || c.len() != 2 {
		t.Fatalf("b still cached, len %d", c.len())
	}
	_, ev = c.add("d", 4)
	if ev == nil || ev.key != "a" {
		t.Fatalf("evicted %v, want a", ev)
	}
}
