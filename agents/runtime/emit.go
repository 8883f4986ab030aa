package runtime

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/jido-bus/jido-bus/agents"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/dispatch"
)

// emit dispatches sig for the agent: to the directive's own dispatch when
// it names one, else to the agent's default_dispatch, else on NATS at
// <prefix>.emit.<agent-id>.<type>.
func (s *server) emit(ctx context.Context, target *agents.Dispatch, sig *bus.Signal) error {
	d, err := s.dispatcherFor(target)
	if err != nil {
		return err
	}
	if err := d.Dispatch(ctx, s.id, sig); err != nil {
		return fmt.Errorf("emit %s %s: %w", sig.Type(), sig.ID(), err)
	}
	if s.rt.cfg.OnEmit != nil {
		s.rt.cfg.OnEmit(s.id, sig)
	}
	return nil
}

func (s *server) dispatcherFor(target *agents.Dispatch) (dispatch.Dispatcher, error) {
	if target != nil {
		cfg, err := dispatchConfig(*target)
		if err != nil {
			return nil, err
		}
		return dispatch.New(cfg, s.rt.cfg.Dispatch)
	}
	return s.defaultDispatcher()
}

// dispatcherForConfig builds a dispatcher for a configured target.
func (s *server) dispatcherForConfig(cfg dispatch.Config) (dispatch.Dispatcher, error) {
	return dispatch.New(cfg, s.rt.cfg.Dispatch)
}

func (s *server) defaultDispatcher() (dispatch.Dispatcher, error) {
	if s.opts.DefaultDispatch == nil {
		return s.rt.emitter, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dispatcher == nil {
		d, err := dispatch.New(*s.opts.DefaultDispatch, s.rt.cfg.Dispatch)
		if err != nil {
			return nil, fmt.Errorf("agent %s default_dispatch: %w", s.id, err)
		}
		s.dispatcher = d
	}
	return s.dispatcher, nil
}

// dispatchConfig maps the pure layer's Dispatch value to a dispatch
// target: adapter "nats" (Target: a subject), "webhook" (Target: the URL;
// options secret or secret_env, timeout, max_attempts), "log" (option level) or "noop".
func dispatchConfig(d agents.Dispatch) (dispatch.Config, error) {
	cfg := dispatch.Config{Kind: dispatch.Kind(d.Adapter)}
	switch cfg.Kind {
	case dispatch.KindNATS:
		cfg.Subject = d.Target
		cfg.Mode = d.Options["mode"]
	case dispatch.KindWebhook:
		cfg.URL, cfg.Secret, cfg.SecretEnv = d.Target, d.Options["secret"], d.Options["secret_env"]
		if v := d.Options["timeout"]; v != "" {
			t, err := time.ParseDuration(v)
			if err != nil {
				return cfg, bus.Errorf(bus.ReasonInvalidRequest, "dispatch webhook option timeout %q: %v", v, err)
			}
			cfg.Timeout = t
		}
		if v := d.Options["max_attempts"]; v != "" {
			n, err := strconv.Atoi(v)
			if err != nil {
				return cfg, bus.Errorf(bus.ReasonInvalidRequest, "dispatch webhook option max_attempts %q: %v", v, err)
			}
			cfg.MaxAttempts = n
		}
	case dispatch.KindLog:
		cfg.Level = d.Options["level"]
	case dispatch.KindNoop:
	default:
		return cfg, bus.Errorf(bus.ReasonInvalidRequest, "dispatch adapter %q is not one of nats, webhook, log, noop", d.Adapter)
	}
	return cfg, cfg.Validate()
}

// publishLifecycle emits a lifecycle signal about agent id on
// <prefix>.emit.<id>.<type>. Its id is derived by the caller from what
// caused it, so a repeat after recovery carries the same id.
func (rt *Runtime) publishLifecycle(agentID, typ, id string, data any) {
	sig, err := lifecycleSignal(typ, id, agentID, rt.now(), data)
	if err == nil {
		err = rt.emitter.Dispatch(rt.ctx, agentID, &sig)
	}
	if err != nil {
		rt.log.Warn("publish lifecycle signal", "agent", agentID, "type", typ, "err", err)
		return
	}
	if rt.cfg.OnEmit != nil {
		rt.cfg.OnEmit(agentID, &sig)
	}
}
