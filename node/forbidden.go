package node

import (
	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/codec"
	"github.com/jido-bus/jido-bus/bus/natsserver"
)

// HeaderUser names, on a forbidden dead letter, the user the server
// refused, when it is known.
const HeaderUser = "jido-dlq-user"

// onViolation files a publish or a subscription the embedded server
// refused by permission as a dead letter of reason forbidden: the refused client is told by the
// server, and the operator finds the attempt on <prefix>.dlq.forbidden,
// in the stream dlq and in jido_signals_refused_total. The payload is not
// kept: the server drops it before anyone sees it. It runs on the refused
// client's goroutine inside the server.
func (n *Node) onViolation(v natsserver.Violation) {
	if !n.filing.Load() {
		n.log.Warn("refused by permission before the node took input", "subject", v.Subject, "user", v.User, "client", v.Client)
		return
	}
	what := "publish to"
	switch {
	case v.Reply:
		what = "publish with the reply subject"
	case v.Subscribe:
		// Nothing was published, but a client reaching for the dead
		// letters, another's inbox or everything is what an operator
		// wants to see, where the other refusals are.
		what = "subscribe to"
	}
	who := "a client"
	if v.User != "" {
		who = "user " + v.User
	}
	n.forbidden(v.Subject, v.User, bus.Errorf(bus.ReasonForbidden, "%s may not %s %s (NATS permissions of its role)", who, what, v.Subject))
}

// deadLetterRefused files a signal agent agentID accepted and then
// refused (runtime.Config.OnRefused) as a dead letter, as if the bus had
// refused it on arrival: on <prefix>.dlq.<reason> and in the stream dlq.
func (n *Node) deadLetterRefused(agentID string, sig *bus.Signal, err error) {
	msg, encErr := codec.Encode(n.subjects.Agent(agentID, sig.Type()), sig, codec.Binary)
	if encErr != nil {
		n.log.Error("dead letter of a refused signal not filed", "agent", agentID, "signal", sig.ID(), "reason", bus.ErrorType(err), "err", encErr)
		return
	}
	n.bus.DeadLetter(msg, err)
}

// forbidden counts a refusal of reason forbidden and files it as a dead
// letter for subject, without a payload.
func (n *Node) forbidden(subject, user string, err error) {
	n.metrics.refused.WithLabelValues(bus.ReasonForbidden).Inc()
	h := nats.Header{}
	if user != "" {
		h.Set(HeaderUser, user)
	}
	n.bus.DeadLetter(&nats.Msg{Subject: subject, Header: h}, err)
}
