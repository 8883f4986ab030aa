package cluster

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jido-bus/jido-bus/internal/testkit"
)

// TestStepDownMovesNothing: the bucket's stream leader steps down twice
// while two members renew their leases under the default lease timeout;
// the election does not outlast three quarters of a lease, so no
// partition moves and no callback runs.
func TestStepDownMovesNothing(t *testing.T) {
	const P = 8
	r := newRecorder(t)
	prefix := newPrefix()
	a := r.join(r.options(prefix, "n1", P))
	b := r.join(r.options(prefix, "n2", P))
	testkit.EventuallyNil(t, "two members own every partition", func() error { return assigned(P, a, b) })
	eventsBefore, movesBefore := r.snapshot()

	nc := connect(t)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	stream := "KV_" + bucketName(prefix)
	for round := range 2 {
		old := streamLeader(t, js, stream)
		if _, err := nc.Request("$JS.API.STREAM.LEADER.STEPDOWN."+stream, nil, 5*time.Second); err != nil {
			t.Fatalf("round %d: step down %s: %v", round, stream, err)
		}
		testkit.EventuallyNil(t, "a new leader of "+stream, func() error {
			if l := streamLeader(t, js, stream); l == "" || l == old {
				return fmt.Errorf("leader %q (was %s)", l, old)
			}
			return nil
		})
		elected := time.Now()
		// Both members renew through the new leader.
		for _, m := range []*Member{a, b} {
			testkit.Eventually(t, m.NodeID()+" to renew after the election", func() bool {
				m.mu.Lock()
				defer m.mu.Unlock()
				return m.nodeLease.After(elected)
			})
		}
	}
	if err := assigned(P, a, b); err != nil {
		t.Error(err)
	}
	events, moves := r.snapshot()
	if len(events) != len(eventsBefore) || len(moves) != len(movesBefore) {
		t.Errorf("callbacks %v and moves %+v during the step-downs, want none", events[len(eventsBefore):], moves[len(movesBefore):])
	}
}

func streamLeader(t *testing.T, js jetstream.JetStream, name string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Second)
	defer cancel()
	s, err := js.Stream(ctx, name)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return ""
		}
		return ""
	}
	if c := s.CachedInfo().Cluster; c != nil {
		return c.Leader
	}
	return ""
}
