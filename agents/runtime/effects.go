package runtime

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/eventlog"
)

// Recording directive outcomes. An outcome is noted when its directive has
// run (noteEffect) and rides in the agent's next cmd record (takeEffects),
// which costs no append. What an agent that has gone quiet still holds is
// recorded by one goroutine for the whole runtime (effectsRecorder): a
// few times per Config.EffectsLinger it gathers the agents that have
// committed nothing for that long and writes all their effects records in one atomic
// multi-stream append, one fsync. A queue loop thus ends as soon as its
// queue is empty, instead of lingering with a timer to see whether a
// signal comes to carry its outcomes; a thousand agents that are getting
// signals hold no goroutine between them. Losing outcomes (a crash before
// they are recorded) only means their directives run again on recovery:
// at least once, an emit with the same id.

// DefaultEffectsLinger is Config.EffectsLinger's default.
const DefaultEffectsLinger = 100 * time.Millisecond

// flushTimeout bounds the wait for the NATS server to confirm emits.
const flushTimeout = 10 * time.Second

// effectsRecorder holds the agents with outcomes not yet in the log.
type effectsRecorder struct {
	mu     sync.Mutex
	agents map[*server]struct{}
	// sweep serialises sweeps: the recorder's, and the last one of Shutdown.
	sweep sync.Mutex
}

// owe notes that s holds outcomes the recorder may have to record.
func (r *effectsRecorder) owe(s *server) {
	r.mu.Lock()
	if r.agents == nil {
		r.agents = make(map[*server]struct{})
	}
	r.agents[s] = struct{}{}
	r.mu.Unlock()
}

// recordOwedEffects writes the effects records of the agents that owe
// some and have been quiet for EffectsLinger, or of all of them when all
// is true (Shutdown), in one append. An agent busy appending is left for the
// next round (unless all): it is about to carry its outcomes itself.
func (rt *Runtime) recordOwedEffects(all bool) {
	r := &rt.effects
	r.sweep.Lock()
	defer r.sweep.Unlock()
	r.mu.Lock()
	owing := make([]*server, 0, len(r.agents))
	for s := range r.agents {
		owing = append(owing, s)
	}
	r.mu.Unlock()
	if len(owing) == 0 {
		return
	}
	now := monotonicNow()
	var due []*server
	var last uint64 // the flush generation every due outcome waits for
	for _, s := range owing {
		s.mu.Lock()
		settled := s.status != StatusRunning || len(s.effects) == 0
		quiet := now-s.lastCommit >= rt.cfg.EffectsLinger
		if !settled && (quiet || all) {
			due = append(due, s)
			for _, e := range s.effects {
				last = max(last, e.gen)
			}
		}
		s.mu.Unlock()
		if settled {
			r.mu.Lock()
			delete(r.agents, s)
			r.mu.Unlock()
		}
	}
	if len(due) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(rt.ctx, flushTimeout)
	err := rt.flusher.wait(ctx, last)
	cancel()
	if err != nil {
		if rt.ctx.Err() == nil {
			rt.log.Warn("flush emitted signals; their outcomes stay unrecorded until NATS confirms them, or are sent again after a restart", "agents", len(due), "err", err)
		}
		return
	}
	// Streams are locked in id order; nothing else holds two at once, so
	// the order only keeps the batch the same from run to run.
	slices.SortFunc(due, func(a, b *server) int { return strings.Compare(a.id, b.id) })
	var (
		parts  []eventlog.StreamAppend
		owners []*server
		taken  [][]effectResult
	)
	for _, s := range due {
		if all {
			s.appendMu.Lock()
		} else if !s.appendMu.TryLock() {
			continue
		}
		rec, es, ok := s.effectsRecord()
		if !ok {
			s.appendMu.Unlock()
			continue
		}
		parts = append(parts, eventlog.StreamAppend{Stream: s.stream, Expected: eventlog.ExactVersion(s.head), Events: []bus.Signal{rec}})
		owners = append(owners, s)
		taken = append(taken, es)
	}
	if len(parts) == 0 {
		return
	}
	errs := make([]error, len(parts))
	res, err := rt.cfg.Store.AppendMulti(rt.ctx, parts)
	if err != nil && len(parts) > 1 {
		// One part can fail the batch; on their own the others go in.
		res = make([]eventlog.AppendResult, len(parts))
		for i, p := range parts {
			res[i], errs[i] = rt.cfg.Store.Append(rt.ctx, p.Stream, p.Expected, p.Events...)
		}
	} else if err != nil {
		errs[0] = err
	}
	for i, s := range owners {
		if errs[i] == nil {
			// Recorded before the append lock is let go: a passivation
			// takes it to snapshot the agent, and must then find these
			// directives no longer pending, or its snapshot says they are
			// and the agent comes back active after a restart.
			s.head = res[i].Version
			s.effectsRecorded(taken[i])
			s.appendMu.Unlock()
			continue
		}
		s.appendMu.Unlock()
		s.putBackEffects(taken[i])
		if rt.ctx.Err() == nil && bus.ErrorType(errs[i]) != ReasonStopped {
			rt.log.Warn("record directive outcomes; they are kept and tried again", "agent", s.id, "err", errs[i])
		}
	}
}

// effectsRecord takes s's confirmed outcomes and returns the effects
// record that holds them; ok is false when there are none or s no longer
// runs. s.appendMu is held.
func (s *server) effectsRecord() (rec bus.Signal, taken []effectResult, ok bool) {
	s.mu.Lock()
	running := s.status == StatusRunning
	s.mu.Unlock()
	if !running {
		return rec, nil, false
	}
	taken = s.takeEffects()
	if len(taken) == 0 {
		return rec, nil, false
	}
	first := taken[0]
	rec, err := record(TypeEffects, fmt.Sprintf("effects:%d:%d:%d", first.Version, first.Index, len(taken)), "", s.rt.now(), effectsRecord{Results: taken})
	if err != nil {
		s.putBackEffects(taken)
		s.rt.log.Warn("encode directive outcomes", "agent", s.id, "err", err)
		return rec, nil, false
	}
	return rec, taken, true
}
