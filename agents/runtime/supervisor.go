package runtime

import (
	"bytes"
	"encoding/json"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/jido-bus/jido-bus/agents"
	"github.com/jido-bus/jido-bus/bus"
)

// restartBudget allows max restarts within window, as OTP's supervisors do.
type restartBudget struct {
	max    int
	window time.Duration
	times  []time.Time
}

func (b *restartBudget) allow(now time.Time) bool {
	kept := b.times[:0]
	for _, t := range b.times {
		if now.Sub(t) < b.window {
			kept = append(kept, t)
		}
	}
	b.times = kept
	if len(b.times) >= b.max {
		return false
	}
	b.times = append(b.times, now)
	return true
}

// guard runs fn, turning a panic into a crash of the agent; it reports
// whether fn returned normally.
// where describes the work for the crash report; it is called only on a
// crash, so the hot path formats nothing.
func (s *server) guard(where func() string, fn func()) (ok bool) {
	defer func() {
		if p := recover(); p != nil {
			s.crash(where(), p, debug.Stack())
			ok = false
		}
	}()
	fn()
	return true
}

// crash takes a panicking agent down and, within the restart budget,
// brings it back from its log: its committed state is replayed, the
// directive that was running (not recorded as done) runs again, and the
// signals still waiting in its inbox are handed to the new instance. Past
// the budget it stays down, status "failed", and says why.
func (s *server) crash(where string, p any, stack []byte) {
	reason := fmt.Sprintf("panic while %s: %v", where, p)
	s.rt.log.Error("agent crashed", "agent", s.id, "reason", reason, "stack", string(stack))
	s.mu.Lock()
	if s.status != StatusRunning {
		s.mu.Unlock()
		return
	}
	if s.restart == agents.RestartTemporary || !s.budget.allow(s.rt.now()) {
		s.status = StatusFailed
		s.reason = fmt.Sprintf("%s; not restarted: %d restarts within %s is the budget", reason, s.budget.max, s.budget.window)
		if s.restart == agents.RestartTemporary {
			s.reason = reason + "; not restarted: restart policy temporary"
		}
		inbox := s.inbox
		s.inbox, s.queue = nil, nil
		for _, cancel := range s.tasks {
			cancel()
		}
		s.mu.Unlock()
		s.timers.stopAll()
		s.rt.refuseAll(s.id, inbox, bus.Errorf(ReasonAgentFailed, "agent %s is down: %s", s.id, s.reason))
		s.notify()
		s.rt.log.Error("agent down for good", "agent", s.id, "reason", s.reason)
		s.rt.childDown(s, s.reason)
		return
	}
	s.status, s.reason = StatusRestarting, reason
	s.restarts++
	for _, cancel := range s.tasks {
		cancel()
	}
	s.mu.Unlock()
	s.timers.stopAll()
	s.notify()

	restarting := s.rt.workers.Go(func() {
		s.loops.Wait() // the crashed loop and its sibling finish first
		s.rt.restart(s)
	})
	if !restarting {
		// The runtime has shut down: the agent is restored from its log
		// at the next start, as every agent is; what its inbox holds is
		// refused as Shutdown refuses what is left.
		s.halt(errShuttingDown)
		s.notify()
	}
}

// restart replaces a crashed server by one restored from the log.
func (rt *Runtime) restart(old *server) {
	rec, err := rt.readStarted(old.stream, old.born)
	var ns *server
	var pending []queued
	if err == nil {
		ns, pending, err = rt.restore(rt.ctx, rec)
	}
	old.mu.Lock()
	inbox := old.inbox
	old.inbox = nil
	if err != nil {
		old.status, old.reason = StatusFailed, fmt.Sprintf("%s; restore from the log failed: %v", old.reason, err)
	} else {
		old.status = StatusStopped
	}
	old.mu.Unlock()
	if err != nil {
		rt.log.Error("restore crashed agent", "agent", old.id, "err", err)
		rt.refuseAll(old.id, inbox, bus.Errorf(ReasonAgentFailed, "agent %s is down: %s", old.id, old.reason))
		old.notify()
		old.mu.Lock()
		reason := old.reason
		old.mu.Unlock()
		rt.childDown(old, reason)
		return
	}
	ns.budget, ns.restarts = old.budget, old.restarts
	old.mu.Lock()
	ns.reason = "restarted after " + old.reason
	old.mu.Unlock()
	rt.mu.Lock()
	if rt.closing {
		rt.mu.Unlock()
		rt.refuseAll(old.id, inbox, errShuttingDown)
		old.notify()
		return
	}
	rt.unregister(old)
	rt.register(ns)
	rt.mu.Unlock()
	rt.log.Info("agent restarted from its log", "agent", ns.id, "version", ns.version, "pending_directives", len(pending), "restarts", ns.restarts)
	ns.resume(pending, inbox)
	old.notify()
}

// jsonRoundTrip decodes v's JSON form into out, for loosely typed maps.
func jsonRoundTrip(v any, out any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return raw, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return raw, dec.Decode(out)
}
