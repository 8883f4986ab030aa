package cluster

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/jido-bus/jido-bus/internal/testkit"
)

// TestDeadMemberPartitionsTaken: a member that stops without a word
// (Close: no release, no OnRelease) loses its partitions to the others
// once their leases have stood still for a lease timeout.
func TestDeadMemberPartitionsTaken(t *testing.T) {
	const P = 12
	r := newRecorder(t)
	prefix := newPrefix()
	var ms []*Member
	for _, id := range []string{"n1", "n2", "n3"} {
		o := r.options(prefix, id, P)
		o.LeaseTimeout = time.Second
		ms = append(ms, r.join(o))
	}
	testkit.EventuallyNil(t, "three members own every partition", func() error { return assigned(P, ms...) })
	dead := ms[0]
	lost := dead.Owned()
	r.kill(dead)
	before, _ := r.snapshot()
	testkit.EventuallyNil(t, "the two left own every partition", func() error { return assigned(P, ms[1:]...) })
	events, moves := r.snapshot()
	for _, e := range events[len(before):] {
		if e.node == "n1" && !e.acquire {
			t.Errorf("OnRelease(%d) called on the closed member", e.p)
		}
	}
	failovers := 0
	for _, mv := range moves {
		if mv.Reason == MoveFailover && mv.From == "n1" {
			failovers++
		}
	}
	if failovers != len(lost) {
		t.Errorf("%d fail-overs from n1, it owned %d partitions (%v); moves %+v", failovers, len(lost), lost, moves)
	}
}

// TestPausedMemberFencesItself: a member whose renewals stop (a pause, a
// cut to the servers) gives its partitions up locally — OnRelease — before
// any other member acquires them, and Owns says false from then on.
func TestPausedMemberFencesItself(t *testing.T) {
	const P = 8
	r := newRecorder(t)
	prefix := newPrefix()
	var paused atomic.Bool
	var ms []*Member
	for _, id := range []string{"n1", "n2"} {
		o := r.options(prefix, id, P)
		o.LeaseTimeout = time.Second
		if id == "n1" {
			o.hooks = &testHooks{pauseRenewals: paused.Load}
		}
		ms = append(ms, r.join(o))
	}
	testkit.EventuallyNil(t, "two members own every partition", func() error { return assigned(P, ms...) })
	held := ms[0].Owned()
	if len(held) == 0 {
		t.Fatal("n1 owns nothing to fence")
	}
	paused.Store(true)
	testkit.Eventually(t, "n2 to own every partition", func() bool { return len(ms[1].Owned()) == P })
	if got := ms[0].Owned(); len(got) != 0 {
		t.Errorf("the paused member still reports owning %v", got)
	}
	events, moves := r.snapshot()
	for _, p := range held {
		rel, acq := lastEvent(events, "n1", p, false), lastEvent(events, "n2", p, true)
		if rel == 0 || rel > acq {
			t.Errorf("partition %d: n1 released it at #%d, n2 acquired it at #%d; want the release first", p, rel, acq)
		}
	}
	fenced := 0
	for _, mv := range moves {
		if mv.Reason == MoveFenced && mv.From == "n1" {
			fenced++
		}
	}
	if fenced != len(held) {
		t.Errorf("%d partitions fenced by n1, it held %d; moves %+v", fenced, len(held), moves)
	}
	// Resumed, it is live again and gets its share back by hand-over.
	paused.Store(false)
	testkit.EventuallyNil(t, "the resumed member to own its share again", func() error { return assigned(P, ms...) })
}

// TestAcquireErrorReleasesAndRetries: a partition whose OnAcquire fails is
// released (no OnRelease: the node did not take it) and tried again later.
func TestAcquireErrorReleasesAndRetries(t *testing.T) {
	const P = 2
	r := newRecorder(t)
	var failures atomic.Int64
	r.failAcquire = func(_ string, p int) error {
		if p == 0 && failures.Add(1) == 1 {
			return errTest
		}
		return nil
	}
	o := r.options(newPrefix(), "n1", P)
	o.LeaseTimeout = time.Second
	m := r.join(o)
	testkit.EventuallyNil(t, "n1 to own both partitions", func() error { return assigned(P, m) })
	events, moves := r.snapshot()
	for _, e := range events {
		if !e.acquire {
			t.Errorf("OnRelease(%d) called; a failed OnAcquire owes none", e.p)
		}
	}
	var reasons []MoveReason
	for _, mv := range moves {
		if mv.Partition == 0 {
			reasons = append(reasons, mv.Reason)
		}
	}
	want := []MoveReason{MoveTaken, MoveAcquireFailed, MoveTaken}
	if len(reasons) != len(want) || reasons[0] != want[0] || reasons[1] != want[1] || reasons[2] != want[2] {
		t.Errorf("partition 0 moved %v, want %v", reasons, want)
	}
}

type testError string

func (e testError) Error() string { return string(e) }

const errTest = testError("refused by the test")
