package runtime

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jido-bus/jido-bus/bus"
)

// Passivation (virtual agents). An agent idle for Config.PassivateAfter
// gives up its goroutines and its memory: its state goes to a snapshot and
// all that is left is an index entry (passiveAgent). The next signal,
// call, state change request or timer brings it back from the snapshot —
// transparently to the caller, who only pays the activation. Agents with
// work in flight stay active. Parents and children passivate like any
// agent: their links are the runtime's (hierarchy), and the hierarchy's
// signals activate them.

// passiveAgent is the whole in-memory cost of a passive agent.
// Kept to 24 bytes (index_memory.go): a timer that activates the agent
// when its first one is due is in rt.wakes, owned by the runtime
// (activation, Release and Shutdown stop it).
type passiveAgent struct {
	typ  typeID
	born uint64 // its incarnation (incarnation.go)
	// version is the agent's version when it went passive (its
	// snapshot's), so listing it costs no read of the snapshot.
	version uint64
}

var errPassivated = errors.New("agent went passive")

// passivateIdle passivates the agents idle for PassivateAfter; the
// runtime's janitor calls it a few times per PassivateAfter.
func (rt *Runtime) passivateIdle() {
	rt.mu.RLock()
	active := make([]*server, 0, len(rt.agents))
	for _, s := range rt.agents {
		active = append(active, s)
	}
	rt.mu.RUnlock()
	now := rt.cfg.Now()
	for _, s := range active {
		if rt.ctx.Err() != nil {
			return
		}
		s.tryPassivate(now)
	}
}

// tryPassivate passivates s if it has been idle long enough and has
// nothing in flight.
func (s *server) tryPassivate(now time.Time) bool { return s.passivate(now, false) }

// passivate is tryPassivate; with force, however briefly the agent was
// idle, and with a new snapshot at its head even when it has one there
// (truncation needs one that carries the started record).
func (s *server) passivate(now time.Time, force bool) bool {
	s.mu.Lock()
	idle := s.status == StatusRunning && !s.inboxRunning && !s.queueRunning &&
		len(s.inbox) == 0 && len(s.queue) == 0 && len(s.tasks) == 0 && len(s.effects) == 0 &&
		(force || now.Sub(s.lastActive) >= s.rt.cfg.PassivateAfter)
	if !idle {
		s.mu.Unlock()
		return false
	}
	s.status = StatusPassive
	snapped, version := s.snapSeq, s.version
	s.mu.Unlock()

	// No loop runs and none can start: the agent is this goroutine's now.
	// The append lock waits out an effects record in flight, so that the
	// snapshot's position and the directives it notes as pending agree.
	// The agent needs a snapshot at the head of its stream — one that
	// decided nothing yet has none at all, and State reads it while the
	// agent is passive; one whose outcomes were recorded after its last
	// snapshot would otherwise come back active after a restart.
	s.appendMu.Lock()
	head := s.head
	needSnapshot := head != snapped || force
	var data []byte
	var err error
	if needSnapshot {
		data, err = s.snapshotData()
	}
	s.appendMu.Unlock()
	if needSnapshot {
		if err == nil {
			err = s.rt.cfg.Store.SaveSnapshot(s.rt.ctx, s.stream, head, data)
		}
		if err != nil {
			s.rt.log.Warn("passivate: save snapshot; the agent stays active", "agent", s.id, "err", err)
			s.mu.Lock()
			s.status = StatusRunning
			s.mu.Unlock()
			return false
		}
	}
	due := s.timers.nextDue(now)
	s.timers.stopAll()
	rt := s.rt
	rt.mu.Lock()
	if rt.agents[s.id] == s {
		delete(rt.agents, s.id)
		rt.agents = shrunk(rt.agents, &rt.agentsPeak)
		if !due.IsZero() && !rt.closing {
			// The agent's timers fire while it is passive: the first one
			// due activates it, and its restored timers fire from there.
			rt.wakes[s.id] = time.AfterFunc(max(due.Sub(now), 0), func() {
				if rt.ctx.Err() == nil {
					if _, err := rt.lookup(s.id); err != nil {
						rt.log.Warn("activate passive agent for its timer", "agent", s.id, "err", err)
					}
				}
			})
		}
		rt.passive[s.id] = passiveAgent{typ: rt.typeIDOf(s.def.Name()), born: s.born, version: version}
		rt.passPeak.grew(len(rt.passive))
	}
	rt.mu.Unlock()
	s.notify()
	return true
}

// activate brings passive agent id back from its log. Concurrent callers
// wait for one activation.
func (rt *Runtime) activate(id string) error {
	rt.mu.Lock()
	if _, ok := rt.agents[id]; ok {
		rt.mu.Unlock()
		return nil
	}
	p, ok := rt.passive[id]
	if !ok {
		rt.mu.Unlock()
		return nil
	}
	typ := rt.typeName(p.typ)
	if rt.closing {
		rt.mu.Unlock()
		return errShuttingDown
	}
	if ch := rt.activating[id]; ch != nil {
		rt.mu.Unlock()
		<-ch
		return nil
	}
	ch := make(chan struct{})
	rt.activating[id] = ch
	rt.mu.Unlock()
	defer func() {
		rt.mu.Lock()
		delete(rt.activating, id)
		rt.mu.Unlock()
		close(ch)
	}()

	rec, err := rt.readStarted(rt.streamFor(typ, id), p.born)
	var s *server
	var pending []queued
	if err == nil {
		s, pending, err = rt.restore(rt.ctx, rec)
	}
	if err != nil {
		return fmt.Errorf("activate agent %s: %w", id, err)
	}
	rt.mu.Lock()
	if rt.closing {
		// The shutdown began while the agent was restored: registered
		// now, nothing would halt it. It stays passive.
		rt.mu.Unlock()
		return errShuttingDown
	}
	if _, ok := rt.passive[id]; !ok {
		// Its partition was released meanwhile (Release): no longer
		// this runtime's.
		err := rt.servesAgent(id)
		rt.mu.Unlock()
		if err == nil {
			err = bus.Errorf(bus.ReasonNotFound, "no agent %q is running", id)
		}
		return err
	}
	if wake := rt.wakes[id]; wake != nil {
		wake.Stop()
		delete(rt.wakes, id)
	}
	delete(rt.passive, id)
	rt.passive = shrunk(rt.passive, &rt.passPeak)
	rt.register(s)
	rt.mu.Unlock()
	s.resume(pending, nil)
	return nil
}

// passiveInfo describes a passive agent from its snapshot, without
// activating it.
func (rt *Runtime) passiveInfo(id, typ string) (Info, error) {
	stream := rt.streamFor(typ, id)
	info := Info{ID: id, Type: typ, Stream: stream, Status: StatusPassive}
	snap, err := rt.cfg.Store.LoadSnapshot(stream)
	if err != nil {
		return info, fmt.Errorf("state of passive agent %s: %w", id, err)
	}
	var data snapshot
	if err := json.Unmarshal(snap.Data, &data); err != nil {
		return info, fmt.Errorf("state of passive agent %s: snapshot: %w", id, err)
	}
	info.State, info.Version, info.ErrorCount = data.State, data.Version, data.ErrorCount
	info.Parent, info.Children = rt.family(id)
	return info, nil
}
