package cluster

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jido-bus/jido-bus/eventlog/jslog"
	"github.com/jido-bus/jido-bus/internal/testkit"
)

func TestConfigMismatchRefused(t *testing.T) {
	r := newRecorder(t)
	prefix := newPrefix()
	r.join(r.options(prefix, "n1", 4))
	_, err := r.tryJoin(r.options(prefix, "n2", 8))
	if !errors.Is(err, ErrConfigMismatch) {
		t.Fatalf("join with 8 partitions where the cluster has 4: %v, want ErrConfigMismatch", err)
	}
	for _, want := range []string{"has 4 partitions", "started with 8", "--partitions 4"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

func TestFewerReplicasRefusedUnlessAllowed(t *testing.T) {
	r := newRecorder(t)
	o := r.options(newPrefix(), "n1", 2)
	o.Replicas = 1
	if _, err := r.tryJoin(o); err == nil || !strings.Contains(err.Error(), "fewer than 3") {
		t.Fatalf("join with 1 replica, not allowed: %v, want a refusal naming the replicas", err)
	}
	o.AllowFewerReplicas = true
	m := r.join(o)
	st, err := m.kv.Status(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if got := st.Config().Replicas; got != 1 {
		t.Fatalf("bucket has %d replicas, want 1", got)
	}
	// A node that does not allow fewer replicas refuses the bucket the
	// first one made.
	o2 := r.options(o.Prefix, "n2", 2)
	_, err = r.tryJoin(o2)
	if !errors.Is(err, jslog.ErrUnsafe) || !strings.Contains(err.Error(), "num_replicas is 1") {
		t.Fatalf("join on an R1 bucket without allowing it: %v, want a *jslog.SettingError on num_replicas", err)
	}
}

func TestDuplicateNodeIDRefused(t *testing.T) {
	r := newRecorder(t)
	prefix := newPrefix()
	o := r.options(prefix, "n1", 4)
	o.LeaseTimeout = time.Second
	first := r.join(o)
	_, err := r.tryJoin(o)
	if !errors.Is(err, ErrDuplicateNode) {
		t.Fatalf("second join as n1: %v, want ErrDuplicateNode", err)
	}
	for _, want := range []string{"node id n1 is already running", "pid ", "--node-id"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	// The first run dies; the id is free once its heartbeat has stood
	// still for a lease timeout, and the partitions the bucket still
	// names it the owner of are the new run's.
	testkit.Eventually(t, "n1 to own every partition", func() bool { return len(first.Owned()) == 4 })
	r.kill(first)
	second := r.join(o)
	testkit.EventuallyNil(t, "the new run of n1 to own every partition", func() error { return assigned(4, second) })
	_, moves := r.snapshot()
	adopted := 0
	for _, mv := range moves {
		if mv.Reason == MoveAdopted && mv.From == "n1" && mv.To == "n1" {
			adopted++
		}
	}
	if adopted != 4 {
		t.Errorf("%d partitions adopted by the new run of n1, want 4; moves %+v", adopted, moves)
	}
}

func TestTwoMembersSplitPartitions(t *testing.T) {
	const P = 32
	r := newRecorder(t)
	prefix := newPrefix()
	a := r.join(r.options(prefix, "n1", P))
	b := r.join(r.options(prefix, "n2", P))
	testkit.EventuallyNil(t, "every partition owned by the member HRW names", func() error { return assigned(P, a, b) })
	na, nb := len(a.Owned()), len(b.Owned())
	if na < P/4 || nb < P/4 {
		t.Errorf("n1 owns %d and n2 %d of %d partitions: HRW split them too unevenly", na, nb, P)
	}
	// Each partition was acquired at most twice (once by n1 before n2
	// joined, then by n2) and its epoch grew by one each time.
	events, _ := r.snapshot()
	epochs := map[int]uint64{}
	for _, e := range events {
		if !e.acquire {
			continue
		}
		if e.epoch != epochs[e.p]+1 {
			t.Errorf("partition %d acquired by %s at epoch %d after epoch %d", e.p, e.node, e.epoch, epochs[e.p])
		}
		epochs[e.p] = e.epoch
	}
	for p := range P {
		node, epoch, ok := a.Owner(p)
		if want := b.Owned(); ok && node == "n2" && !contains(want, p) {
			t.Errorf("n1 sees n2 own %d (epoch %d), n2 does not", p, epoch)
		}
	}
}

func contains(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
