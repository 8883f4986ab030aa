package jslog

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/jido-bus/jido-bus/internal/testkit"
)

// TestLeaderStepDownLosesNothing: writers append without pause while the
// leader of every partition stream is made to step down several times.
// Appends that fail (no leader for a moment, a lost acknowledgement) are
// retried as the same append; at the end every stream holds exactly the
// acknowledged events, once each, in order.
func TestLeaderStepDownLosesNothing(t *testing.T) {
	l, nc := openLog(t, Options{})
	const writers = 6
	var (
		wg     sync.WaitGroup
		stop   atomic.Bool
		acked  [writers][]string
		failed atomic.Int64
	)
	progress := make(chan struct{}, writers*1000)
	for w := range writers {
		wg.Go(func() {
			stream := fmt.Sprintf("agent/load%d", w)
			for n := 0; !stop.Load(); n++ {
				id := fmt.Sprintf("%d", n+1)
				for {
					ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
					_, err := l.Append(ctx, stream, eventlog.ExactVersion(uint64(n)), sig("t.x", id))
					cancel()
					if err == nil {
						break
					}
					if errors.Is(err, eventlog.ErrWrongVersion) {
						t.Errorf("%s: %v", stream, err)
						return
					}
					failed.Add(1)
				}
				acked[w] = append(acked[w], id)
				select {
				case progress <- struct{}{}:
				default:
				}
			}
		})
	}
	// Each step-down waits for appends to go on before the next one.
	for round := range 2 {
		for p := range l.opts.Partitions {
			name := l.partitionStreamName(p)
			old := leaderOf(t, l, p)
			if _, err := nc.Request("$JS.API.STREAM.LEADER.STEPDOWN."+name, nil, 5*time.Second); err != nil {
				t.Fatalf("round %d: step down %s: %v", round, name, err)
			}
			waitLeader(t, l, p, old)
			for range writers {
				select {
				case <-progress:
				case <-time.After(30 * time.Second):
					t.Fatalf("round %d: no append was acknowledged for 30s after %s stepped down", round, name)
				}
			}
		}
	}
	stop.Store(true)
	wg.Wait()
	total := 0
	for w := range writers {
		stream := fmt.Sprintf("agent/load%d", w)
		if diff := cmp.Diff(acked[w], ids(collectAll(l, stream))); diff != "" {
			t.Errorf("%s: stored differs from acknowledged (-acked +stored):\n%s", stream, diff)
		}
		total += len(acked[w])
	}
	t.Logf("%d appends acknowledged, %d attempts failed and were retried, %+v", total, failed.Load(), l.Stats())
}

func leaderOf(t *testing.T, l *Log, p int) string {
	t.Helper()
	info, err := l.parts[p].Info(t.Context())
	if err != nil || info.Cluster == nil {
		t.Fatalf("info of partition %d: %v", p, err)
	}
	return info.Cluster.Leader
}

// waitLeader waits until partition p has a leader other than old.
func waitLeader(t *testing.T, l *Log, p int, old string) {
	t.Helper()
	// The election runs on the servers' timers; poll its outcome.
	testkit.EventuallyNil(t, fmt.Sprintf("a new leader of partition %d", p), func() error {
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		info, err := l.parts[p].Info(ctx)
		switch {
		case err != nil:
			return err
		case info.Cluster == nil || info.Cluster.Leader == "":
			return errors.New("no leader")
		case info.Cluster.Leader == old:
			return fmt.Errorf("the leader is still %s", old)
		}
		return nil
	})
}
