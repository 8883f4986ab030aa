package cluster

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/jido-bus/jido-bus/internal/testkit"
)

// TestStatusShowsRecoveringPartitions: a node whose OnAcquire has not
// returned (its agents are still being brought back from the log) is
// shown behind on those partitions, in ReadStatus and in the member's own
// Status, until it returns; its heartbeat age is the server's time of its
// record, so it is there for every node.
func TestStatusShowsRecoveringPartitions(t *testing.T) {
	const P = 3
	r := newRecorder(t)
	prefix := newPrefix()
	o := r.options(prefix, "n1", P)
	o.LeaseTimeout = time.Second
	release := make(chan struct{})
	acquire := o.OnAcquire
	o.OnAcquire = func(ctx context.Context, p int, epoch uint64) error {
		select {
		case <-release:
		case <-ctx.Done():
			return ctx.Err()
		}
		return acquire(ctx, p, epoch)
	}
	m := r.join(o)
	nc := connect(t)
	recovering := func(want []int) error {
		st, err := ReadStatus(t.Context(), nc, prefix)
		if err != nil {
			return err
		}
		if len(st.Nodes) != 1 {
			return fmt.Errorf("nodes %+v, want n1", st.Nodes)
		}
		n := st.Nodes[0]
		if !slices.Equal(n.Recovering, want) {
			return fmt.Errorf("n1 recovering %v, want %v", n.Recovering, want)
		}
		if n.HeartbeatAge <= 0 {
			return fmt.Errorf("n1 heartbeat age %v: want the time since the server stored its record", n.HeartbeatAge)
		}
		if ms := m.Status(); len(ms.Nodes) != 1 || !slices.Equal(ms.Nodes[0].Recovering, want) {
			return fmt.Errorf("member status %+v, want n1 recovering %v", ms.Nodes, want)
		}
		return nil
	}
	testkit.EventuallyNil(t, "n1 shown recovering every partition", func() error { return recovering([]int{0, 1, 2}) })
	close(release)
	testkit.EventuallyNil(t, "n1 shown recovering nothing", func() error { return recovering([]int{}) })
}
