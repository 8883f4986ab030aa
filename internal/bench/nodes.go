package bench

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jido-bus/jido-bus/agents/builtin"
	"github.com/jido-bus/jido-bus/agents/runtime"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/emitstream"
	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/jido-bus/jido-bus/node"
)

// closeTimeout bounds how long shutting a node down waits for what it
// took, and then for NATS to drain.
const closeTimeout = 10 * time.Second

// shutdown shuts n down within closeTimeout.
func shutdown(n *node.Node) error {
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	return n.Shutdown(ctx)
}

// startNode starts a durable node on dir whose NATS listens on a free
// local port, so publishers connect over TCP as real clients do. commits,
// when not nil, is wired around the runtime's store.
func startNode(ctx context.Context, dir string, commits *commitCounter, noSync bool) (*node.Node, error) {
	return startNodeWith(ctx, dir, commits, noSync, emitstream.Config{})
}

// startNodeWith is startNode with the emit stream es (the default: on).
func startNodeWith(ctx context.Context, dir string, commits *commitCounter, noSync bool, es emitstream.Config) (*node.Node, error) {
	cfg := node.Config{
		DataDir:    dir,
		NATS:       node.NATSConfig{Listen: "127.0.0.1:0"},
		NoSync:     noSync,
		EmitStream: es,
	}
	if commits != nil {
		cfg.Runtime = func(rc *runtime.Config) { rc.Store = &countingStore{Store: rc.Store, c: commits} }
	}
	n, err := node.Start(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("start a node on %s: %w", dir, err)
	}
	return n, nil
}

// commitCounter counts the counter signals the runtime committed, and
// hands a credit back to the publishers for each one.
type commitCounter struct {
	n       atomic.Int64
	credits chan struct{} // nil when nobody waits for credits
	// groups, when set, is told the durable watermark after each append.
	groups atomic.Pointer[groupCounter]
}

func (c *commitCounter) committed(k int) {
	c.n.Add(int64(k))
	if c.credits == nil {
		return
	}
	for range k {
		select {
		case <-c.credits:
		default:
			return
		}
	}
}

// countingStore is the log as the runtime sees it, counting each committed
// counter signal as its append returns. It adds one comparison per event
// to the runtime's path and changes nothing else.
type countingStore struct {
	runtime.Store
	c *commitCounter
}

// durableLog is what countingStore needs of the log beneath to sample
// its durable watermark; *eventlog.Log has it.
type durableLog interface{ Durable() uint64 }

func (s *countingStore) Append(ctx context.Context, stream string, expected eventlog.ExpectedVersion, events ...bus.Signal) (eventlog.AppendResult, error) {
	res, err := s.Store.Append(ctx, stream, expected, events...)
	if err != nil {
		return res, err
	}
	s.count(events, res)
	return res, nil
}

// AppendMulti counts like Append: agents commit several decisions at once
// through it.
func (s *countingStore) AppendMulti(ctx context.Context, parts []eventlog.StreamAppend) ([]eventlog.AppendResult, error) {
	res, err := s.Store.AppendMulti(ctx, parts)
	if err != nil {
		return res, err
	}
	for i, p := range parts {
		s.count(p.Events, res[i])
	}
	return res, nil
}

// count notes the counter increments of one committed part.
func (s *countingStore) count(events []bus.Signal, res eventlog.AppendResult) {
	k := 0
	for i := range events {
		if events[i].Type() == builtin.CounterIncrement && i < len(res.Positions) && !res.Positions[i].Duplicate {
			k++
		}
	}
	if k > 0 {
		s.c.committed(k)
	}
	if g := s.c.groups.Load(); g != nil {
		if l, ok := s.Store.(durableLog); ok {
			g.observe(l.Durable())
		}
	}
}

// agentIDs names count counters: <prefix>0, <prefix>1 …
func agentIDs(prefix string, count int) []string {
	ids := make([]string, count)
	for i := range ids {
		ids[i] = prefix + strconv.Itoa(i)
	}
	return ids
}

// startParallelism bounds the agents started at once: enough to share
// fsyncs, few enough not to flood the log's queue.
const startParallelism = 64

// startCounters starts a counter for each id, several at a time.
func startCounters(ctx context.Context, rt *runtime.Runtime, ids []string, opts runtime.Options) error {
	var (
		wg    sync.WaitGroup
		next  atomic.Int64
		mu    sync.Mutex
		first error
	)
	for range min(startParallelism, len(ids)) {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= len(ids) || ctx.Err() != nil {
					return
				}
				_, err := rt.Start(ctx, runtime.StartRequest{Type: "counter", ID: ids[i], Options: opts})
				if err != nil {
					mu.Lock()
					if first == nil {
						first = fmt.Errorf("start counter %s: %w", ids[i], err)
					}
					mu.Unlock()
					return
				}
			}
		})
	}
	wg.Wait()
	if first != nil {
		return first
	}
	return ctx.Err()
}

// sumVersions adds up the versions of the agents: the number of signals
// each one committed.
func sumVersions(rt *runtime.Runtime, ids []string) (int64, error) {
	var sum int64
	var errs []error
	for _, id := range ids {
		info, err := rt.State(id)
		if err != nil {
			errs = append(errs, fmt.Errorf("state of %s: %w", id, err))
			continue
		}
		sum += int64(info.Version)
	}
	return sum, errors.Join(errs...)
}

// versionsGrace bounds the wait for agents to show the versions their
// committed appends gave them.
const versionsGrace = 5 * time.Second

// awaitVersions waits until the agents' versions add up to want (or the
// grace period ends) and returns the sum.
func awaitVersions(ctx context.Context, rt *runtime.Runtime, ids []string, want int64) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, versionsGrace)
	defer cancel()
	t := time.NewTicker(time.Millisecond)
	defer t.Stop()
	for {
		sum, err := sumVersions(rt, ids)
		if err != nil || sum >= want {
			return sum, err
		}
		select {
		case <-ctx.Done():
			return sum, nil
		case <-t.C:
		}
	}
}

// groupCounter counts commit groups: every fsync of the log advances its
// durable watermark once, and each distinct watermark seen (in increasing
// order) is one group. It is sampled after every append the runtime makes
// and by a goroutine woken by each advance; two groups that complete
// before any sample is taken count as one, so the count is a lower bound
// and signals per group an upper bound.
type groupCounter struct {
	last   atomic.Uint64
	groups atomic.Int64
}

func (g *groupCounter) observe(durable uint64) {
	for {
		last := g.last.Load()
		if durable <= last {
			return
		}
		if g.last.CompareAndSwap(last, durable) {
			g.groups.Add(1)
			return
		}
	}
}

// groupWatcher samples a log's durable watermark at each advance, into a
// groupCounter.
type groupWatcher struct {
	g    *groupCounter
	quit chan struct{}
	wg   sync.WaitGroup
}

func watchGroups(l *eventlog.Log, g *groupCounter) *groupWatcher {
	g.last.Store(l.Durable())
	w := &groupWatcher{g: g, quit: make(chan struct{})}
	w.wg.Go(func() {
		last := l.Durable()
		for {
			ch := l.Notify()
			select {
			case <-w.quit:
				return
			case <-ch:
			}
			d := l.Durable()
			if d == last {
				return // the log closed
			}
			last = d
			g.observe(d)
		}
	})
	return w
}

// stop ends the watcher and returns the number of groups counted.
func (w *groupWatcher) stop() int64 {
	close(w.quit)
	w.wg.Wait()
	return w.g.groups.Load()
}
