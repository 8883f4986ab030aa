package runtime

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"runtime"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/jido-bus/jido-bus/internal/testkit"
)

// discardStore commits nothing and remembers nothing, so that what a
// memory benchmark measures is the runtime's own cost per agent, not the
// log's caches.
type discardStore struct{}

var _ Store = discardStore{}

func (discardStore) Append(_ context.Context, stream string, expected eventlog.ExpectedVersion, events ...bus.Signal) (eventlog.AppendResult, error) {
	base := uint64(0)
	if expected > 0 {
		base = uint64(expected)
	}
	res := eventlog.AppendResult{Stream: stream, Version: base + uint64(len(events)), Positions: make([]eventlog.Position, len(events))}
	for i := range events {
		res.Positions[i].Seq = base + uint64(i) + 1
	}
	return res, nil
}

func (d discardStore) AppendMulti(ctx context.Context, parts []eventlog.StreamAppend) ([]eventlog.AppendResult, error) {
	out := make([]eventlog.AppendResult, len(parts))
	for i, p := range parts {
		out[i], _ = d.Append(ctx, p.Stream, p.Expected, p.Events...)
	}
	return out, nil
}

func (discardStore) ReadStream(string, eventlog.ReadOptions) iter.Seq2[eventlog.Entry, error] {
	return func(func(eventlog.Entry, error) bool) {}
}

func (discardStore) SaveSnapshot(context.Context, string, uint64, []byte) error { return nil }

func (discardStore) LoadSnapshot(string) (eventlog.Snapshot, error) {
	return eventlog.Snapshot{}, eventlog.ErrNotFound
}

// heapAndStacks returns the bytes of live heap objects plus goroutine
// stacks, after a full collection.
func heapAndStacks() uint64 {
	runtime.GC()
	runtime.GC()
	samples := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/heap/stacks:bytes"}}
	metrics.Read(samples)
	return samples[0].Value.Uint64() + samples[1].Value.Uint64()
}

// BenchmarkMemoryPerAgent starts N counters, sends each one increment,
// and reports the bytes each costs while active and idle, then once
// passive (issue 6's budget: ≤ 4 KB active idle, ≤ 512 B passive).
// Run it alone: go test -run '^$' -bench MemoryPerAgent -benchtime 1x ./agents/runtime/
func BenchmarkMemoryPerAgent(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		b.Run(fmt.Sprintf("agents=%d", n), func(b *testing.B) {
			for b.Loop() {
				measureAgents(b, n)
			}
		})
	}
}

func measureAgents(b *testing.B, n int) {
	h := newHarness(b, func(c *Config) { c.PassivateAfter = -1 })
	cfg := h.cfg
	cfg.Store = discardStore{}
	cfg.OnEmit = nil // the harness keeps every emitted signal; not here
	rt, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer rt.Shutdown(context.Background())
	ctx := context.Background()
	sig := signal(b, "counter.increment", nil)

	base := heapAndStacks()
	for i := range n {
		id := fmt.Sprintf("c%07d", i)
		if _, err := rt.Start(ctx, StartRequest{Type: "counter", ID: id}); err != nil {
			b.Fatal(err)
		}
		if err := rt.Cast(id, sig); err != nil {
			b.Fatal(err)
		}
	}
	waitIdle(b, rt)
	active := heapAndStacks()

	rt.mu.RLock()
	all := make([]*server, 0, len(rt.agents))
	for _, s := range rt.agents {
		all = append(all, s)
	}
	rt.mu.RUnlock()
	rt.cfg.PassivateAfter = time.Nanosecond
	later := time.Now().Add(time.Hour)
	for _, s := range all {
		if !s.tryPassivate(later) {
			b.Fatalf("agent %s did not go passive", s.id)
		}
	}
	all = nil
	passive := heapAndStacks()
	b.ReportMetric(float64(active-base)/float64(n), "B/active-agent")
	b.ReportMetric(float64(passive-base)/float64(n), "B/passive-agent")
}

// waitIdle waits until no agent has work queued or a loop running.
func waitIdle(b *testing.B, rt *Runtime) {
	// A million agents may take minutes to settle: longer than a test's
	// Eventually waits.
	err := testkit.Poll(5*time.Minute, func() error {
		rt.mu.RLock()
		defer rt.mu.RUnlock()
		for _, s := range rt.agents {
			s.mu.Lock()
			busy := s.inboxRunning || s.queueRunning || len(s.inbox) > 0 || len(s.queue) > 0 || len(s.effects) > 0
			s.mu.Unlock()
			if busy {
				return errors.New("busy")
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal("agents still busy after 5 minutes")
	}
}
