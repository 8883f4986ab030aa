package cluster

import (
	"testing"
	"time"

	"github.com/jido-bus/jido-bus/internal/testkit"
)

// TestLeaveReleasesAtOnce: a member that leaves hands everything over
// without the others waiting for a lease to run out (the lease here is
// longer than the test's wait), and its record is gone.
func TestLeaveReleasesAtOnce(t *testing.T) {
	const P = 8
	r := newRecorder(t)
	prefix := newPrefix()
	var ms []*Member
	for _, id := range []string{"n1", "n2"} {
		o := r.options(prefix, id, P)
		o.LeaseTimeout = 10 * time.Minute
		ms = append(ms, r.join(o))
	}
	testkit.EventuallyNil(t, "two members own every partition", func() error { return assigned(P, ms...) })
	held := ms[0].Owned()
	if err := ms[0].Leave(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := ms[0].Leave(t.Context()); err != nil {
		t.Fatalf("second Leave: %v", err)
	}
	testkit.EventuallyNil(t, "n2 to own every partition", func() error { return assigned(P, ms[1]) })
	events, _ := r.snapshot()
	for _, p := range held {
		rel, acq := lastEvent(events, "n1", p, false), lastEvent(events, "n2", p, true)
		if rel == 0 || rel > acq {
			t.Errorf("partition %d: n1 released it at #%d, n2 acquired it at #%d", p, rel, acq)
		}
	}
	if _, err := ms[1].kv.Get(t.Context(), nodeKey("n1")); err == nil {
		t.Error("n1's record is still in the bucket after Leave")
	}
	select {
	case <-ms[0].Done():
	default:
		t.Error("Done is not closed after Leave")
	}
}
