package runtime

import (
	"github.com/jido-bus/jido-bus/bus"
)

// Refusing accepted signals. A signal in an agent's inbox has been
// accepted: Deliver returned nil, so whoever sent it learns of its fate
// only from the runtime. It ends committed, or refused here — never
// dropped: the refusal is counted (Observer.Refused), reported to
// Config.OnRefused (the node's dead letter, the only trace a cast leaves)
// and answered to a caller, in that order, so a caller told of the error
// finds its dead letter filed.

// refuse refuses one accepted signal of agent s with err.
func (s *server) refuse(env envelope, err error) {
	s.rt.refuse(s.id, env, err)
}

// refuse refuses one accepted signal of agent id with err.
func (rt *Runtime) refuse(id string, env envelope, err error) {
	if !env.lifecycle {
		if obs := rt.cfg.Observer; obs != nil {
			obs.Refused(bus.ErrorType(err))
		}
		if rt.cfg.OnRefused != nil {
			rt.cfg.OnRefused(id, &env.sig, err)
		} else if env.reply == nil {
			rt.log.Warn("cast refused", "agent", id, "signal", env.sig.ID(), "type", env.sig.Type(), "err", err)
		}
	}
	if env.reply != nil {
		env.reply(Reply{}, err)
	}
}

// refuseAll refuses every signal of inbox, agent id's, with err.
func (rt *Runtime) refuseAll(id string, inbox []envelope, err error) {
	for _, env := range inbox {
		rt.refuse(id, env, err)
	}
}
