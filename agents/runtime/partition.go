package runtime

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/eventlog"
)

// Partitions (cluster mode). Several nodes share one replicated log, and
// each agent is decided by one node at a time: the one that owns the
// agent's partition. A runtime with Config.Partitions serves only the
// partitions it was given with Acquire, and gives one up with Release; a
// signal, a start or a state request for an agent of any other partition
// is refused with unavailable (the sender retries; the node that owns it
// answers). Ownership itself (who holds which partition, and for how
// long) is the caller's: the runtime only keeps to it. The log's fence —
// every append expects the stream's head — is what makes a node that lost
// a partition without knowing it harmless: its next commit is refused.

// Partitions divides agents among the nodes of a cluster.
type Partitions struct {
	// Of returns the partition of a log stream; a parent, its children
	// and their index entries share one.
	Of func(stream string) int
	// Index names the index stream of partition p; Of(Index(p)) is p.
	Index func(p int) string
}

// errNotOwned refuses what belongs to a partition this runtime does not
// serve.
func errNotOwned(id string, p int) error {
	return bus.Errorf(bus.ReasonUnavailable, "agent %s is in partition %d, which this node does not own now (it may be moving between nodes); retry, and the node that owns it answers", id, p)
}

// indexFor names the index stream that lists the agent of stream.
func (rt *Runtime) indexFor(stream string) string {
	if p := rt.cfg.Partitions; p != nil {
		return p.Index(p.Of(stream))
	}
	return IndexStream
}

// serves returns nil when this runtime decides for the agent id of
// stream, or the unavailable error that says it does not; rt.mu must be
// held (either way).
func (rt *Runtime) serves(id, stream string) error {
	p := rt.cfg.Partitions
	if p == nil {
		return nil
	}
	if n := p.Of(stream); !rt.held[n] {
		return errNotOwned(id, n)
	}
	return nil
}

// servesAgent is serves for an agent known by id only: an agent's
// partition is its root's, whatever its type's stream prefix.
func (rt *Runtime) servesAgent(id string) error {
	if rt.cfg.Partitions == nil {
		return nil
	}
	return rt.serves(id, "agent/"+id)
}

// Held returns the partitions this runtime serves, in order; nil in
// single-node mode.
func (rt *Runtime) Held() []int {
	rt.mu.RLock()
	defer rt.mu.RUnlock()
	held := make([]int, 0, len(rt.held))
	for p := range rt.held {
		held = append(held, p)
	}
	slices.Sort(held)
	return held
}

// Acquire brings back partition p's agents from its index, as Recover
// does for a single node — snapshots, replays, pending directives and
// timers — and serves the partition from then on. It returns how many
// agents came back. It is an error without Config.Partitions.
func (rt *Runtime) Acquire(ctx context.Context, p int) (int, error) {
	parts := rt.cfg.Partitions
	if parts == nil {
		return 0, fmt.Errorf("runtime: Acquire(%d) without Config.Partitions", p)
	}
	rt.mu.RLock()
	closing, held := rt.closing, rt.held[p]
	rt.mu.RUnlock()
	if closing {
		return 0, bus.Errorf(ReasonClosed, "the runtime is shutting down")
	}
	if held {
		return 0, nil
	}
	n, err := rt.recoverIndex(ctx, parts.Index(p), func() { rt.held[p] = true })
	if err != nil {
		return n, fmt.Errorf("partition %d: %w", p, err)
	}
	return n, nil
}

// Release gives partition p up: from now on its agents' signals are
// refused with unavailable; the signals they had already accepted are
// decided and committed until ctx ends (those left then are refused: an
// ended ctx refuses them all, for a node that lost the partition's lease);
// directives not yet run stay pending in the log, for the next owner to
// run (a spawn here would be refused: the partition is no longer this
// runtime's); the outcomes of directives that ran are recorded; then
// their loops, timers and tasks stop. Nothing is recorded as stopped: the agents stay
// registered in the log, for the partition's next owner to Acquire. It
// returns once the agents' loops have ended, or ctx has.
func (rt *Runtime) Release(ctx context.Context, p int) error {
	parts := rt.cfg.Partitions
	if parts == nil {
		return fmt.Errorf("runtime: Release(%d) without Config.Partitions", p)
	}
	rt.mu.Lock()
	delete(rt.held, p)
	var gone []*server
	for _, s := range rt.agents {
		if parts.Of(s.stream) == p {
			gone = append(gone, s)
		}
	}
	for _, s := range gone {
		rt.unregister(s)
		rt.hier.forget(s.id)
	}
	for id, pa := range rt.passive {
		if typ := rt.typeName(pa.typ); parts.Of(rt.streamFor(typ, id)) == p {
			if wake := rt.wakes[id]; wake != nil {
				wake.Stop()
				delete(rt.wakes, id)
			}
			delete(rt.passive, id)
			delete(rt.byType[typ], id)
			rt.hier.forget(id)
		}
	}
	rt.passive = shrunk(rt.passive, &rt.passPeak)
	for id, f := range rt.failed {
		if parts.Of(f.stream) == p {
			delete(rt.failed, id)
		}
	}
	rt.mu.Unlock()
	// In an orderly hand-over the directives of what still commits are
	// left pending in the log, for the next owner, who reads it after
	// this release. A node that lost the lease (ctx ended) runs those of
	// a decision that was in flight itself: the new owner may have read
	// the agent before that commit and would not know of them.
	if ctx.Err() == nil {
		for _, s := range gone {
			s.mu.Lock()
			s.handingOver = true
			s.mu.Unlock()
		}
	}
	// Outcomes are recorded while the partition's log is still this
	// node's to write, so that its next owner does not run those
	// directives again.
	rt.finishAndHalt(ctx, gone, bus.Errorf(bus.ReasonUnavailable, "partition %d moved to another node; retry, and the node that owns it now answers", p))
	done := make(chan struct{})
	go func() {
		for _, s := range gone {
			s.loops.Wait()
		}
		close(done)
	}()
	// Halted, the loops end after the decision and the directive each has
	// in flight, however short ctx was: the partition is given up only
	// once nothing of this runtime acts for it any more.
	select {
	case <-done:
	case <-time.After(haltedLoopsTimeout):
		return fmt.Errorf("release partition %d: %d agents still busy %s after they were halted (a directive that does not return?)", p, len(gone), haltedLoopsTimeout)
	}
	rt.log.Info("partition released", "partition", p, "agents", len(gone))
	return nil
}

// haltedLoopsTimeout bounds the wait for halted agents' loops to end.
const haltedLoopsTimeout = 30 * time.Second

// fenced takes s out of service after the log refused its commit of env
// because the stream moved past s.head — another node wrote it, so this
// node lost the agent's partition (or had a stale view of it when it took
// the partition back) — or could not say whether it was stored (a
// replicated log that lost its acknowledgement). Either way this node's
// idea of the agent may be wrong. The signal is refused unavailable, for
// its sender to retry (with the same id: if it was stored after all, the
// retry is answered as a duplicate). The agent goes passive: if this node
// still serves the partition, the next signal brings it back from the log
// as it is now.
func (rt *Runtime) fenced(s *server, env envelope, cause error) {
	rt.log.Warn("commit refused or unconfirmed; reloading the agent from the log", "agent", s.id, "stream", s.stream, "head", s.head, "err", cause)
	err := bus.Errorf(bus.ReasonUnavailable, "agent %s: another node wrote its log since this node read it (its partition moved); nothing was recorded; retry", s.id)
	if errors.Is(cause, eventlog.ErrOutcomeUnknown) {
		err = bus.Errorf(bus.ReasonUnavailable, "agent %s: the log did not confirm the commit of signal %s (%v); retry with the same id: if it was stored, the retry is answered as a duplicate", s.id, env.sig.ID(), cause)
	}
	s.halt(err)
	rt.mu.Lock()
	if rt.agents[s.id] == s {
		rt.unregister(s)
		rt.passive[s.id] = passiveAgent{typ: rt.typeIDOf(s.def.Name()), born: s.born, version: s.version}
		rt.passPeak.grew(len(rt.passive))
		set := rt.byType[s.def.Name()]
		if set == nil {
			set = make(map[string]struct{})
			rt.byType[s.def.Name()] = set
		}
		set[s.id] = struct{}{}
	}
	rt.mu.Unlock()
	// Answered only now: a caller that retries at once must find the
	// agent passive (reloaded from the log on its next signal), not this
	// halted server, whose halt would refuse the retry with the fence's
	// error once more (TestStaleOwnerCommitIsFenced, flaky under load).
	s.refuse(env, err)
	s.notify()
}

// Serves reports whether this runtime serves partition p; in single-node
// mode it serves every agent.
func (rt *Runtime) Serves(p int) bool {
	if rt.cfg.Partitions == nil {
		return true
	}
	rt.mu.RLock()
	defer rt.mu.RUnlock()
	return rt.held[p]
}

// newAgentID picks the id of an agent started without one: in cluster
// mode one whose partition this runtime serves, so that the start is
// decided here rather than refused (ids are random; a few draws find one
// when the node serves any partition at all).
func (rt *Runtime) newAgentID(typ string) string {
	id := bus.NewID()
	p := rt.cfg.Partitions
	if p == nil {
		return id
	}
	rt.mu.RLock()
	defer rt.mu.RUnlock()
	for range 256 {
		if len(rt.held) == 0 || rt.held[p.Of(rt.streamFor(typ, id))] {
			return id
		}
		id = bus.NewID()
	}
	return id
}

// MergeLists merges the lists several runtimes answered to ListSome with
// opts (the nodes of a cluster, each listing its own partitions) into
// the one list a single runtime holding them all would answer: opts'
// order, its Limit.
func MergeLists(opts ListOptions, lists ...[]Info) []Info {
	var all []Info
	for _, l := range lists {
		all = append(all, l...)
	}
	queue := func(i Info) int {
		if i.Status != StatusRunning && i.Status != StatusRestarting {
			return -1 // passive and failed agents come after the active ones
		}
		return i.QueueLength
	}
	slices.SortFunc(all, func(a, b Info) int {
		if opts.ByQueue && queue(a) != queue(b) {
			return queue(b) - queue(a)
		}
		return strings.Compare(a.ID, b.ID)
	})
	if opts.Limit > 0 && len(all) > opts.Limit {
		all = all[:opts.Limit]
	}
	return all
}
