package runtime

import (
	"context"
	"errors"
	"fmt"
	goruntime "runtime"

	"github.com/jido-bus/jido-bus/agents"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/eventlog"
)

// commitStart writes the started record of the agent's incarnation s.born
// and its index record in one batch, expecting the stream at version
// expected (nextIncarnation); a stream that moved meanwhile is refused.
// s.appendMu is held (Start takes it before the agent becomes visible).
func (s *server) commitStart(ctx context.Context, rec startedRecord, expected eventlog.ExpectedVersion) error {
	now := s.rt.now()
	started, err := record(TypeStarted, incarnationID("started", s.id, s.born), s.id, now, rec)
	if err != nil {
		return err
	}
	idx, err := record(TypeRegistered, incarnationID("registered", s.id, s.born), s.id, now,
		indexRecord{ID: s.id, Type: rec.Type, Stream: s.stream, Parent: rec.Parent, Seq: s.born})
	if err != nil {
		return err
	}
	res, err := s.rt.cfg.Store.AppendMulti(ctx, []eventlog.StreamAppend{
		{Stream: s.stream, Expected: expected, Events: []bus.Signal{started}, AllNew: true},
		{Stream: s.rt.indexFor(s.stream), Events: []bus.Signal{idx}, AllNew: true},
	})
	if errors.Is(err, eventlog.ErrWrongVersion) || errors.Is(err, eventlog.ErrDuplicate) {
		return bus.Errorf(ReasonAlreadyExists, "agent %q was started meanwhile: its stream %s moved on; stop it first or choose another id", s.id, s.stream)
	}
	if err != nil {
		return fmt.Errorf("start agent %s: commit: %w", s.id, err)
	}
	s.head = res[0].Version
	s.publish()
	return nil
}

// stop ends the agent for good: queued signals are refused, queued
// directives dropped (and recorded as such), timers and tasks cancelled,
// and a stopped record closes the stream in the same batch that removes
// the agent from the index. Then the hierarchy hears of it.
func (s *server) stop(ctx context.Context, reason string) error {
	s.mu.Lock()
	if s.status == StatusStopped {
		s.mu.Unlock()
		return bus.Errorf(bus.ReasonNotFound, "agent %s is already stopped", s.id)
	}
	s.status, s.reason = StatusStopped, reason
	inbox, dropped := s.inbox, s.queue
	s.inbox, s.queue = nil, nil
	for _, cancel := range s.tasks {
		cancel()
	}
	s.mu.Unlock()
	s.waitExecuted(ctx)
	s.mu.Lock()
	effects := s.effects
	s.effects = nil
	s.mu.Unlock()
	s.timers.stopAll()
	s.rt.refuseAll(s.id, inbox, bus.Errorf(ReasonStopped, "agent %s stopped before deciding this signal: %s", s.id, reason))

	// What the agent emitted reaches the NATS server before its outcome is
	// recorded, as everywhere else (a failed flush is logged: the agent
	// stops all the same, and a stopped agent runs nothing again).
	var last uint64
	for _, e := range effects {
		last = max(last, e.gen)
	}
	if last > 0 {
		fctx, cancel := context.WithTimeout(ctx, flushTimeout)
		if err := s.rt.flusher.wait(fctx, last); err != nil && s.rt.ctx.Err() == nil {
			s.rt.log.Warn("flush emitted signals before stopping", "agent", s.id, "err", err)
		}
		cancel()
	}
	for _, q := range dropped {
		if q.index >= 0 {
			effects = append(effects, effectResult{Version: q.version, Index: q.index, Kind: q.d.DirectiveKind(), Outcome: OutcomeDropped})
		}
	}
	err := s.writeStopped(ctx, reason, effects)
	s.rt.mu.Lock()
	s.rt.unregister(s)
	s.rt.mu.Unlock()
	s.rt.log.Info("agent stopped", "agent", s.id, "reason", reason, "dropped_directives", len(dropped))
	s.rt.publishLifecycle(s.id, TypeStopped, incarnationID("stopped", s.id, s.born), map[string]any{"id": s.id, "reason": reason})
	s.notify()
	s.rt.childExited(s, reason)
	s.rt.parentStopped(s, reason)
	return err
}

// stopFromDirective stops the agent from its own queue loop.
func (s *server) stopFromDirective(reason string) {
	if err := s.stop(s.rt.ctx, reason); err != nil && bus.ErrorType(err) != bus.ReasonNotFound {
		s.rt.log.Error("stop agent", "agent", s.id, "err", err)
	}
}

func (s *server) writeStopped(ctx context.Context, reason string, effects []effectResult) error {
	now := s.rt.now()
	var events []bus.Signal
	if len(effects) > 0 {
		rec, err := record(TypeEffects, incarnationID("effects:stop", s.id, s.born), "", now, effectsRecord{Results: effects})
		if err != nil {
			return err
		}
		events = append(events, rec)
	}
	stopped, err := record(TypeStopped, incarnationID("stopped", s.id, s.born), s.id, now, stoppedRecord{Reason: reason})
	if err != nil {
		return err
	}
	dereg, err := record(TypeDeregistered, incarnationID("deregistered", s.id, s.born), s.id, now, indexRecord{ID: s.id, Reason: reason, Seq: s.born})
	if err != nil {
		return err
	}
	events = append(events, stopped)
	s.appendMu.Lock()
	defer s.appendMu.Unlock()
	if s.head == 0 {
		// Its start was never committed (it failed while this stop
		// waited for it): there is no stream of its own to close.
		return nil
	}
	_, err = s.rt.cfg.Store.AppendMulti(ctx, []eventlog.StreamAppend{
		{Stream: s.stream, Expected: eventlog.ExactVersion(s.head), Events: events},
		{Stream: s.rt.indexFor(s.stream), Events: []bus.Signal{dereg}},
	})
	if err != nil {
		return fmt.Errorf("stop agent %s: commit: %w", s.id, err)
	}
	return nil
}

// halt stops this process's work for the agent without stopping the
// agent (the runtime is closing): it will be recovered on the next start.
func (s *server) halt(err error) {
	s.mu.Lock()
	if s.status == StatusRunning || s.status == StatusRestarting {
		s.status = ReasonClosed
	}
	inbox := s.inbox
	s.inbox = nil
	for _, cancel := range s.tasks {
		cancel()
	}
	s.mu.Unlock()
	s.timers.stopAll()
	s.rt.refuseAll(s.id, inbox, err)
}

// lifecycleEnvelope delivers a lifecycle signal to agent id, which decides
// it only when one of its routes matches.
func (rt *Runtime) deliverLifecycle(id string, sig bus.Signal) {
	for {
		s, err := rt.lookup(id)
		if err != nil {
			return
		}
		err = s.deliver(envelope{sig: sig, lifecycle: true, internal: true})
		if errors.Is(err, errPassivated) {
			// Going passive right now, as Deliver meets it: look again.
			goruntime.Gosched()
			continue
		}
		if err != nil {
			rt.log.Warn("lifecycle signal not delivered", "agent", id, "type", sig.Type(), "err", err)
		}
		return
	}
}

// childExited tells a stopped agent's parent, which forgets the child and
// receives jido.agent.child.exit {tag, id, reason}.
func (rt *Runtime) childExited(child *server, reason string) {
	rt.mu.Lock()
	parent, ok := rt.hier.unlinkChild(child.id)
	rt.mu.Unlock()
	if ok {
		rt.tellParent(child, parent, reason)
	}
}

// childDown tells the parent of a child that went down for good (status
// failed: past its restart budget, or its log could not restore it) with
// jido.agent.child.exit, as a parent learns of a child that died. The
// child stays linked: it still holds its id until it is stopped, and its
// parent's death still stops it. The signal's id is that of the exit its
// stop would send, so the parent decides one exit per incarnation.
func (rt *Runtime) childDown(child *server, reason string) {
	rt.mu.Lock()
	parent := rt.hier.parentOf(child.id)
	rt.mu.Unlock()
	if parent != nil {
		rt.tellParent(child, *parent, "failed: "+reason)
	}
}

func (rt *Runtime) tellParent(child *server, parent ParentRef, reason string) {
	data := map[string]any{"tag": parent.Tag, "id": child.id, "reason": reason}
	id := incarnationID("child-exit", child.id, child.born)
	rt.publishLifecycle(parent.ID, TypeChildExit, id, data)
	if sig, err := lifecycleSignal(TypeChildExit, id, child.id, rt.now(), data); err == nil {
		rt.deliverLifecycle(parent.ID, sig)
	}
}

// parentStopped applies each child's on_parent_death. A child that stops with its parent keeps its link until it is gone, so
// that its child.exit names the parent as before; the others let go of
// the parent first. Only a child that must stop or decide its orphaning
// is activated when passive.
func (rt *Runtime) parentStopped(parent *server, reason string) {
	rt.mu.Lock()
	children := rt.hier.takeChildren(parent.id)
	for id, l := range children {
		if l.onDeath != OnParentDeathStop {
			rt.hier.unlinkChild(id)
		}
	}
	rt.mu.Unlock()
	for id, l := range children {
		switch l.onDeath {
		case OnParentDeathStop:
			if err := rt.Stop(rt.ctx, id, fmt.Sprintf("parent %s stopped: %s", parent.id, reason)); err != nil {
				rt.mu.Lock()
				rt.hier.unlinkChild(id) // it runs on (or is gone) without its parent
				rt.mu.Unlock()
				if bus.ErrorType(err) != bus.ReasonNotFound {
					rt.log.Error("stop child after its parent", "agent", id, "parent", parent.id, "err", err)
				}
			}
		case OnParentDeathEmitOrphan:
			data := map[string]any{"parent_id": parent.id, "reason": reason}
			sigID := incarnationID("orphaned:"+id, parent.id, parent.born)
			rt.publishLifecycle(id, TypeOrphaned, sigID, data)
			if sig, err := lifecycleSignal(TypeOrphaned, sigID, parent.id, rt.now(), data); err == nil {
				rt.deliverLifecycle(id, sig)
			}
		}
	}
}

// spawnOpts is how SpawnAgent.Opts are read.
type spawnOpts struct {
	ID           string         `json:"id,omitempty"`
	InitialState map[string]any `json:"initial_state,omitempty"`
	Options
}

func execSpawn(ctx context.Context, d agents.Directive, x *ExecContext) (ExecResult, error) {
	sp := d.(agents.SpawnAgent)
	var opts spawnOpts
	if len(sp.Opts) > 0 {
		raw, err := jsonRoundTrip(sp.Opts, &opts)
		if err != nil {
			return ExecResult{}, bus.Errorf(bus.ReasonInvalidRequest, "spawn_agent %s opts %s: %v", sp.Tag, raw, err)
		}
	}
	s := x.s
	id := opts.ID
	if id == "" {
		id = bus.ChildID(s.id, sp.Tag)
	}
	req := StartRequest{Type: sp.Type, ID: id, InitialState: opts.InitialState, Options: opts.Options,
		Parent: &ParentRef{ID: s.id, Tag: sp.Tag, Meta: sp.Meta}, restart: sp.Restart}
	_, err := s.rt.Start(ctx, req)
	if err != nil && bus.ErrorType(err) == ReasonAlreadyExists && x.Recovered {
		err = nil // spawned before the crash: spawning is idempotent by child id
	}
	if err != nil {
		return ExecResult{}, fmt.Errorf("spawn %s child %s: %w", sp.Type, id, err)
	}
	data := map[string]any{"tag": sp.Tag, "id": id, "type": sp.Type}
	sigID := incarnationID("child-started", id, s.rt.bornOf(id))
	s.rt.publishLifecycle(s.id, TypeChildStarted, sigID, data)
	if sig, err := lifecycleSignal(TypeChildStarted, sigID, id, s.rt.now(), data); err == nil {
		s.rt.deliverLifecycle(s.id, sig)
	}
	return ExecResult{}, nil
}

func execStopChild(ctx context.Context, d agents.Directive, x *ExecContext) (ExecResult, error) {
	sc := d.(agents.StopChild)
	x.s.rt.mu.RLock()
	id, ok := x.s.rt.hier.child(x.s.id, sc.Tag)
	x.s.rt.mu.RUnlock()
	if !ok {
		return ExecResult{}, bus.Errorf(bus.ReasonNotFound, "agent %s has no child tagged %q", x.s.id, sc.Tag)
	}
	reason := sc.Reason
	if reason == "" {
		reason = "stopped by parent " + x.s.id
	}
	if err := x.s.rt.Stop(ctx, id, reason); err != nil && bus.ErrorType(err) != bus.ReasonNotFound {
		return ExecResult{}, err
	}
	return ExecResult{}, nil
}

// family returns copies of agent id's parent and children.
func (rt *Runtime) family(id string) (*ParentRef, map[string]string) {
	rt.mu.RLock()
	defer rt.mu.RUnlock()
	return rt.hier.parentOf(id), rt.hier.childrenOf(id)
}
