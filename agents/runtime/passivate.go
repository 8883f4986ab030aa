package runtime

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
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
type passiveAgent struct {
	typ string
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
func (s *server) tryPassivate(now time.Time) bool {
	s.mu.Lock()
	idle := s.status == StatusRunning && !s.inboxRunning && !s.queueRunning &&
		len(s.inbox) == 0 && len(s.queue) == 0 && len(s.tasks) == 0 && len(s.effects) == 0 &&
		now.Sub(s.lastActive) >= s.rt.cfg.PassivateAfter
	if !idle {
		s.mu.Unlock()
		return false
	}
	s.status = StatusPassive
	snapped := s.snapSeq
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
	needSnapshot := head != snapped
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
	wake := s.timers.nextDue(now)
	s.timers.stopAll()
	rt := s.rt
	rt.mu.Lock()
	if rt.agents[s.id] == s {
		delete(rt.agents, s.id)
		rt.passive[s.id] = passiveAgent{typ: s.def.Name()}
	}
	rt.mu.Unlock()
	s.notify()
	if !wake.IsZero() {
		// The agent's timers fire while it is passive: the first one due
		// activates it, and its restored timers fire from there.
		time.AfterFunc(max(wake.Sub(now), 0), func() {
			if rt.ctx.Err() == nil {
				if _, err := rt.lookup(s.id); err != nil {
					rt.log.Warn("activate passive agent for its timer", "agent", s.id, "err", err)
				}
			}
		})
	}
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

	rec, err := rt.readStarted(rt.streamFor(p.typ, id))
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
	delete(rt.passive, id)
	rt.register(s)
	rt.mu.Unlock()
	s.resume(pending, nil)
	return nil
}

// passiveInfo describes a passive agent from its snapshot, without
// activating it.
func (rt *Runtime) passiveInfo(id string, p passiveAgent) (Info, error) {
	stream := rt.streamFor(p.typ, id)
	info := Info{ID: id, Type: p.typ, Stream: stream, Status: StatusPassive}
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
