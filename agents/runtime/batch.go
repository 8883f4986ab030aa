package runtime

import (
	"errors"

	"github.com/jido-bus/jido-bus/agents"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/eventlog"
)

// Deciding several queued signals per append. When signals queue up in an
// agent's inbox — a busy agent, or a burst — the inbox loop decides them
// one after the other, each on the state the one before left, and commits
// them all (each signal and its cmd record, in order) in one append: one
// trip through the log's sequencer and one fsync wait instead of one per
// signal. Only then are the calls answered and the directives queued, in
// the signals' order, exactly as if they had been committed one by one.
//
// The append refuses duplicates (eventlog.StreamAppend.AllNew): a signal
// already in the log must be answered as a duplicate with nothing decided
// again, but the decisions after it in the batch were taken on a state
// that counted it. On a duplicate nothing is written and the batch is
// decided again one signal at a time, the way that handles it. Any other
// failed append falls back the same way: one signal the log refuses (an
// attribute past its limit) must not take the valid ones with it, and
// when every append fails (a full disk) each signal is refused on its
// own, loudly (refuse.go).

// maxBatch is the most signals decided for one append.
const maxBatch = 32

// batchable returns how many signals at the head of inbox can be decided
// for one append: up to maxBatch, stopping at a lifecycle signal, which
// is decided on its own (it may be dropped without a trace). Signals
// delivered together (CallAll) are never split, even past maxBatch.
func batchable(inbox []envelope) int {
	n, group := 0, 0 // group: the end of the last group begun
	for n < len(inbox) && (n < maxBatch || n < group) && !inbox[n].lifecycle {
		group = max(group, n+1+inbox[n].joined)
		n++
	}
	return n
}

// decideAndCommitBatch decides the signals of batch in order and commits
// them in one append, then does for each what decideAndCommit does after
// its commit. A signal its decision refuses is left out of the append, and
// the next is decided on the state before it. answered counts the signals answered so far, so that a crash
// answers the rest.
func (s *server) decideAndCommitBatch(batch []envelope, answered *int) {
	type decision struct {
		env        envelope
		next       agents.Agent
		directives []agents.Directive
		refused    error // not committed: the decision refused the signal
	}
	ds := make([]decision, 0, len(batch))
	events := make([]bus.Signal, 0, 2*len(batch))
	now := s.rt.now()
	carried := s.takeEffects()
	agent := s.agent
	kept := 0 // decisions to commit so far
	for _, env := range batch {
		next, directives := s.decideOn(agent, env.sig)
		if e, refused := agents.Refusal(directives); refused {
			ds = append(ds, decision{env: env, refused: e.Err})
			continue
		}
		rec, err := cmdRecordOf(s.rt.codec, &env.sig, s.version+uint64(kept)+1, now, directives, carriedBy(kept, carried))
		if err != nil {
			// Rare (a third-party directive that does not encode): the
			// one-by-one path answers that signal with the error.
			s.putBackEffects(carried)
			s.oneByOne(batch, answered)
			return
		}
		events = append(events, env.sig, rec)
		ds = append(ds, decision{env: env, next: next, directives: directives})
		kept++
		agent = next
	}
	if kept == 0 {
		s.putBackEffects(carried)
		for _, d := range ds {
			s.refuse(d.env, d.refused)
			*answered++
		}
		return
	}
	res, err := s.appendPart(s.rt.ctx, events, true)
	if err != nil {
		// A duplicate, or one signal the log refuses (too large), fails
		// the whole append; one at a time, only that signal is answered
		// as a duplicate or refused, and the others commit.
		if !errors.Is(err, eventlog.ErrDuplicate) {
			s.rt.log.Warn("commit signals together; committing them one at a time", "agent", s.id, "signals", len(batch), "first", batch[0].sig.ID(), "err", err)
		}
		s.putBackEffects(carried)
		s.oneByOne(batch, answered)
		return
	}
	if obs := s.rt.cfg.Observer; obs != nil {
		took := s.rt.now().Sub(now)
		for range kept {
			obs.Committed(s.def.Name(), took)
		}
	}
	s.effectsRecorded(carried)
	i := 0 // index of the decision among those committed
	for _, d := range ds {
		if d.refused != nil {
			s.refuse(d.env, d.refused)
		} else {
			s.committed(d.env, d.next, d.directives, now, res.Positions[2*i+1])
			i++
		}
		*answered++
	}
}

// carriedBy returns the outcomes the decision at index i of a batch
// carries: the first carries them all.
func carriedBy(i int, carried []effectResult) []effectResult {
	if i == 0 {
		return carried
	}
	return nil
}

// oneByOne decides and commits the signals of batch one at a time.
func (s *server) oneByOne(batch []envelope, answered *int) {
	for _, env := range batch {
		s.decideAndCommit(env)
		*answered++
	}
}
