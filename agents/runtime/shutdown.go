package runtime

import (
	"context"

	"github.com/jido-bus/jido-bus/bus"
)

// Shutting down. A signal an agent has accepted (Deliver returned nil)
// was promised a commit or a refusal, and a shutdown keeps the promise:
// first no new signal is accepted, then each agent decides and commits
// what its inbox holds, and only what is still waiting when the caller's
// time runs out is refused — loudly, through refuse (a dead letter, and
// unavailable to a caller).

// errShuttingDown refuses signals once the runtime is shutting down.
var errShuttingDown = bus.Errorf(bus.ReasonUnavailable, "the node is shutting down; retry after it restarts or against another node")

// Shutdown stops every agent loop and timer of this process without
// stopping the agents: they stay registered in the log and Recover brings
// them back in the next run. New signals are refused with unavailable
// from the start; the signals already queued are committed until ctx
// ends, and those still queued then are refused with unavailable (and
// reported to Config.OnRefused). Outcomes of directives that ran are
// recorded before it returns, so the next run does not repeat them.
func (rt *Runtime) Shutdown(ctx context.Context) error {
	rt.mu.Lock()
	rt.closing = true
	rt.shuttingDown.Store(true)
	for _, wake := range rt.wakes {
		wake.Stop()
	}
	all := make([]*server, 0, len(rt.agents))
	for _, s := range rt.agents {
		all = append(all, s)
	}
	rt.mu.Unlock()
	// Outcomes noted but not yet in the log are recorded before the
	// halt, so that a clean restart does not run those directives again
	// (a crash would).
	rt.finishAndHalt(ctx, all, errShuttingDown)
	// A halted inbox loop ends after the decision it has in flight; its
	// commit goes on under a live context, so it ends in the log or
	// refused, never both.
	rt.deciding.Wait()
	rt.cancel()
	rt.workers.Wait()
	return nil
}

// awaitInbox waits until s's inbox is empty and its inbox loop has ended,
// or s no longer decides (stopped, failed), and reports whether that
// happened before ctx ended. An agent being restarted after a crash is
// waited for until its restart ends; a restart that ends once the
// shutdown has begun refuses the signals it carried (Runtime.restart).
func (s *server) awaitInbox(ctx context.Context) bool {
	for {
		changed := s.changedChan()
		s.mu.Lock()
		done := (len(s.inbox) == 0 && !s.inboxRunning) || (s.status != StatusRunning && s.status != StatusRestarting)
		s.mu.Unlock()
		if done {
			return true
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return false
		}
	}
}

// finishAndHalt lets servers decide and commit what their inboxes hold
// until ctx ends, records in one append the outcomes of the directives
// they ran that are not in the log yet, then halts them with err, which
// refuses whatever is still waiting: the end of a shutdown, or of a
// partition's hand-over.
func (rt *Runtime) finishAndHalt(ctx context.Context, servers []*server, err error) {
	for _, s := range servers {
		if !s.awaitInbox(ctx) {
			break // out of time: halt refuses what is left
		}
	}
	for _, s := range servers {
		s.mu.Lock()
		noted := len(s.effects) > 0
		s.mu.Unlock()
		if noted {
			rt.effects.owe(s)
		}
	}
	rt.recordOwedEffects(true)
	for _, s := range servers {
		s.halt(err)
	}
}
