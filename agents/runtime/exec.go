package runtime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jido-bus/jido-bus/agents"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/dispatch"
)

// DirectiveExec executes one kind of directive. The runtime calls it only
// after the directive was committed to the log with the signal that
// produced it (commit, then act), on the agent's queue loop: one directive
// of an agent at a time, in commit order. An executor may therefore take
// its time, but every moment it takes delays the agent's later directives;
// work that waits on the world should start, return ExecAsync, and send its
// result back to the agent as a signal with ExecContext.Deliver.
//
// Directives run at least once: after a crash, a directive whose outcome was
// not recorded runs again with ExecContext.Recovered set, so an executor
// should be idempotent or tolerate repeats (Emit re-publishes the same
// CloudEvent id, so consumers can deduplicate).
//
// A panic in an executor crashes the agent, which is restored from its log
// within the runtime's restart budget.
type DirectiveExec interface {
	Exec(ctx context.Context, d agents.Directive, x *ExecContext) (ExecResult, error)
}

// ExecFunc adapts a function to DirectiveExec.
type ExecFunc func(ctx context.Context, d agents.Directive, x *ExecContext) (ExecResult, error)

// Exec calls f.
func (f ExecFunc) Exec(ctx context.Context, d agents.Directive, x *ExecContext) (ExecResult, error) {
	return f(ctx, d, x)
}

// ExecKind is what an executor did.
type ExecKind int

const (
	// ExecOK: done; the next directive runs.
	ExecOK ExecKind = iota
	// ExecAsync: work started; its result comes back later as a signal.
	ExecAsync
	// ExecStop stops the agent at once. Beware: the directives queued
	// behind this one are dropped (recorded as such), async work in flight
	// is orphaned, and callers polling the agent see it gone. It is for
	// abnormal or framework-level termination; an agent that finished its
	// work should say so in its state (status "completed") and let callers
	// Await it — completion is state, not process exit.
	ExecStop
)

// ExecResult is an executor's outcome.
type ExecResult struct {
	Kind   ExecKind
	Reason string // why, for ExecStop
}

func (r ExecResult) outcome() string {
	switch r.Kind {
	case ExecAsync:
		return OutcomeAsync
	case ExecStop:
		return OutcomeStop
	}
	return OutcomeOK
}

// ExecContext is what an executor knows and may do.
type ExecContext struct {
	AgentID string
	// Input is the signal whose decision produced the directive.
	Input bus.Signal
	// Index is the directive's position in that decision's list.
	Index int
	// Recovered is true when the directive runs again after a restart.
	Recovered bool
	Logger    *slog.Logger

	s *server
	q queued
}

// Deliver sends sig to the agent itself, as a cast: it is decided and
// committed like any other signal. Use it to return async results. A
// full queue does not refuse it (the result of the agent's own work would
// be lost, and what waits for it would wait for ever); it fails only when
// the agent is gone or the runtime shuts down.
func (x *ExecContext) Deliver(sig bus.Signal) error {
	return x.s.rt.deliver(x.AgentID, envelope{sig: sig, internal: true})
}

// Emit dispatches sig as the agent would with an Emit directive without a
// dispatch of its own.
func (x *ExecContext) Emit(ctx context.Context, sig *bus.Signal) error {
	if sig.Time().IsZero() {
		stamped := withTime(*sig, x.q.at, x.s.rt.now)
		sig = &stamped
	}
	return x.s.emit(ctx, nil, sig)
}

// withTime returns sig, or a copy of it with time at (now() when at is
// zero) when it has none: the pure layer has no clock, so a signal it
// builds carries the time of the signal it answers, and none when that one
// had none; every emitted signal carries time all the same. The commit
// time of the decision makes a repeat after recovery carry the same time.
func withTime(sig bus.Signal, at time.Time, now func() time.Time) bus.Signal {
	if !sig.Time().IsZero() {
		return sig
	}
	if at.IsZero() {
		at = now()
	}
	c := sig.Clone() // the directive's own signal stays as it was logged
	c.SetTime(at.UTC())
	return c
}

var errNoExecutor = errors.New("no executor for this directive kind")

// execute runs one committed directive.
func (s *server) execute(q queued) (ExecResult, error) {
	kind := q.d.DirectiveKind()
	x := s.rt.execs[kind]
	if x == nil {
		s.rt.log.Warn("unknown directive kind; recorded and skipped", "agent", s.id, "kind", kind, "version", q.version, "index", q.index)
		return ExecResult{}, fmt.Errorf("%w %q", errNoExecutor, kind)
	}
	ctx := &ExecContext{AgentID: s.id, Input: q.input, Index: q.index, Recovered: q.recovered, Logger: s.rt.log, s: s, q: q}
	res, err := x.Exec(s.rt.ctx, q.d, ctx)
	if err != nil && q.d.DirectiveKind() != agents.KindError {
		// A failed effect is an error of the agent's like any other.
		s.rt.log.Warn("directive failed", "agent", s.id, "kind", kind, "version", q.version, "index", q.index, "err", err)
		if pr, perr := s.applyPolicy(agents.Error{Err: bus.AsError(err), Context: "directive", Action: kind}, q); perr == nil && pr.Kind == ExecStop {
			return pr, err
		}
	}
	return res, err
}

// builtinExecutors returns the executors of the built-in directive kinds.
func builtinExecutors() map[string]DirectiveExec {
	return map[string]DirectiveExec{
		agents.KindEmit:           ExecFunc(execEmit),
		agents.KindError:          ExecFunc(execError),
		agents.KindSpawnAgent:     ExecFunc(execSpawn),
		agents.KindStopChild:      ExecFunc(execStopChild),
		agents.KindSchedule:       ExecFunc(execSchedule),
		agents.KindScheduleCancel: ExecFunc(execScheduleCancel),
		agents.KindCron:           ExecFunc(execCron),
		agents.KindCronCancel:     ExecFunc(execCronCancel),
		agents.KindRunInstruction: ExecFunc(execRunInstruction),
		agents.KindStop:           ExecFunc(execStop),
	}
}

// execEmit publishes the Emit's signal with the position of its decision
// (dispatch.WithPosition), which a nats target sends in its headers: the
// same on a re-run after a crash, as the id and the time are.
func execEmit(ctx context.Context, d agents.Directive, x *ExecContext) (ExecResult, error) {
	e := d.(agents.Emit)
	sig := withTime(e.Signal, x.q.at, x.s.rt.now)
	ctx = dispatch.WithPosition(ctx, dispatch.Position{Stream: x.s.stream, Seq: x.q.seq, GlobalSeq: x.q.gseq, Index: x.q.index})
	return ExecResult{}, x.s.emit(ctx, e.Dispatch, &sig)
}

func execError(_ context.Context, d agents.Directive, x *ExecContext) (ExecResult, error) {
	return x.s.applyPolicy(d.(agents.Error), x.q)
}

func execStop(_ context.Context, d agents.Directive, _ *ExecContext) (ExecResult, error) {
	reason := d.(agents.Stop).Reason
	if reason == "" {
		reason = "stop directive"
	}
	return ExecResult{Kind: ExecStop, Reason: reason}, nil
}
