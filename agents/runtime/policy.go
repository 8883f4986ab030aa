package runtime

import (
	"context"
	"fmt"

	"github.com/jido-bus/jido-bus/agents"
	"github.com/jido-bus/jido-bus/bus"
)

// ErrorEvent is what an error-policy function is told.
type ErrorEvent struct {
	AgentID    string
	Error      agents.Error
	Input      bus.Signal // the signal whose decision failed
	ErrorCount int        // errors of this agent so far, this one included
}

// ErrorPolicyFunc is an error policy written in Go, registered by name in
// Config.ErrorPolicies. Returning stop ends the agent with reason.
type ErrorPolicyFunc func(ctx context.Context, e ErrorEvent) (stop bool, reason string)

// applyPolicy hands an Error directive to the agent's error policy. Every
// error is also published as jido.agent.error on the agent's emit subject,
// for whoever watches.
func (s *server) applyPolicy(e agents.Error, q queued) (ExecResult, error) {
	s.mu.Lock()
	s.errorCount++
	count := s.errorCount
	s.mu.Unlock()

	errType, msg := "", ""
	if e.Err != nil {
		errType, msg = e.Err.Type, e.Err.Message
	}
	s.rt.log.Error("agent error", "agent", s.id, "type", errType, "context", e.Context, "action", e.Action, "message", msg, "count", count)
	data := map[string]any{"error": e.Err, "context": e.Context, "action": e.Action, "signal": q.input.ID(), "count": count}
	id := fmt.Sprintf("%s.error.%d.%d", q.input.ID(), q.version, q.index)
	s.rt.publishLifecycle(s.id, TypeError, id, data)

	p := s.opts.ErrorPolicy
	switch p.kind() {
	case PolicyStopOnError:
		return ExecResult{Kind: ExecStop, Reason: fmt.Sprintf("error policy stop_on_error: %s: %s", errType, msg)}, nil
	case PolicyMaxErrors:
		if count >= p.MaxErrors {
			return ExecResult{Kind: ExecStop, Reason: fmt.Sprintf("error policy max_errors: %d errors, the last %s: %s", count, errType, msg)}, nil
		}
	case PolicyEmitSignal:
		if p.Dispatch != nil {
			sig, err := lifecycleSignal(TypeError, id, s.id, s.rt.now(), data)
			if err != nil {
				return ExecResult{}, err
			}
			d, err := s.dispatcherForConfig(*p.Dispatch)
			if err != nil {
				return ExecResult{}, err
			}
			if err := d.Dispatch(s.rt.ctx, s.id, &sig); err != nil {
				return ExecResult{}, fmt.Errorf("error policy emit_signal: %w", err)
			}
		}
	case PolicyFunc:
		fn := s.rt.cfg.ErrorPolicies[p.Func]
		if fn == nil {
			return ExecResult{}, fmt.Errorf("error policy func %q is not registered with this runtime", p.Func)
		}
		stop, reason := callPolicy(fn, ErrorEvent{AgentID: s.id, Error: e, Input: q.input, ErrorCount: count}, s)
		if stop {
			return ExecResult{Kind: ExecStop, Reason: "error policy " + p.Func + ": " + reason}, nil
		}
	}
	return ExecResult{}, nil
}

// callPolicy runs a policy function; one that panics is logged and taken
// as "carry on", so a broken policy cannot take the agent down by itself.
func callPolicy(fn ErrorPolicyFunc, e ErrorEvent, s *server) (stop bool, reason string) {
	defer func() {
		if p := recover(); p != nil {
			s.rt.log.Error("error policy panicked; carrying on", "agent", s.id, "panic", p)
			stop, reason = false, ""
		}
	}()
	return fn(s.rt.ctx, e)
}
