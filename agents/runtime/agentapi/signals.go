package agentapi

import (
	"context"
	"strings"

	"github.com/jido-bus/jido-bus/agents/runtime"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/natsbus"
)

// ServeSignals subscribes the runtime's signal ingress: a signal on
// <prefix>.agent.<id>.<type> is handed to agent id, one on
// <prefix>.signal.<type> to every agent whose routes match. The same
// admission as the API's call and cast applies (Options.Admit,
// Options.AdmitBroadcast and the runtime's own types).
func ServeSignals(b *natsbus.Bus, rt *runtime.Runtime, opts Options) error {
	in := ingress{b: b, rt: rt, opts: opts}
	if err := b.HandleSignals(bus.KindAgent, in.toAgent); err != nil {
		return err
	}
	return b.HandleSignals(bus.KindSignal, in.broadcast)
}

// RuntimeTypePrefix starts every signal type the runtime itself writes or
// delivers: its records (jido.agent.started, .cmd, .effects, .stopped, the
// agent index), the lifecycle signals it hands to agents
// (jido.agent.child.exit, jido.agent.instruction.result, jido.cron_tick,
// …) and dead letters (jido.deadletter).
const RuntimeTypePrefix = "jido."

// runtimeType refuses, as forbidden, a signal of the runtime's own types
// sent from outside. Committed to an agent's stream like any signal, a
// forged jido.agent.stopped makes the agent fail at the next start, a
// forged jido.agent.instruction.result runs any of its actions with the
// sender's params (it bypasses the routes), and a forged child exit,
// task result or timer tick makes the agent act on something that never
// happened. Only the runtime produces them, in process.
func runtimeType(typ string) error {
	if !strings.HasPrefix(typ, RuntimeTypePrefix) {
		return nil
	}
	return bus.Errorf(bus.ReasonForbidden, "%s is a signal type of the runtime's own (types starting with %q: its records, lifecycle signals, task results and timer ticks): only the node produces them; send your agents types of your own", typ, RuntimeTypePrefix)
}

type ingress struct {
	b    *natsbus.Bus
	rt   *runtime.Runtime
	opts Options
}

// refuse counts a refusal the bus did not make and rejects d with it.
func (in ingress) refuse(d *natsbus.Delivery, reason string, err error) {
	if in.opts.Refused != nil {
		in.opts.Refused(reason)
	}
	d.Reject(err)
}

// toAgent hands a signal to the agent its subject names. A call is
// answered after the commit with {"state":…,"version":N}; a signal refused
// before the commit is a dead letter — here when the runtime does not
// take it (unknown agent, full queue), through the runtime's OnRefused
// when it took it and then refused it (its agent's decision refused it,
// the log would not commit it, the node shut down); a decision that
// failed was recorded in the agent's stream and is answered with its
// error. A signal of a transient type is published for live views and
// never committed.
func (in ingress) toAgent(_ context.Context, d *natsbus.Delivery) {
	if err := in.opts.admit(d.Address.AgentID, d.Signal.Type()); err != nil {
		in.refuse(d, bus.ReasonForbidden, err)
		return
	}
	if in.opts.Transient != nil && in.opts.Transient(d.Signal.Type()) {
		in.publishTransient(d)
		return
	}
	var reply func(runtime.Reply, error)
	if d.IsCall() {
		reply = func(r runtime.Reply, err error) {
			if err == nil {
				d.Respond(r)
			} else {
				d.Fail(err) // a refusal's dead letter is filed already
			}
		}
	}
	if err := in.rt.Deliver(d.Address.AgentID, d.Signal, reply); err != nil {
		d.Reject(err)
	}
}

// publishTransient publishes d on its agent's emit subject, for live
// views, when the agent exists.
func (in ingress) publishTransient(d *natsbus.Delivery) {
	if _, err := in.rt.State(d.Address.AgentID); err != nil {
		in.refuse(d, bus.ErrorType(err), err) // the runtime was not asked to take it, so did not count it
		return
	}
	if err := in.b.Publish(in.b.Subjects().Emit(d.Address.AgentID, d.Signal.Type()), &d.Signal); err != nil {
		d.Fail(err)
		return
	}
	d.Respond(map[string]any{"id": d.Signal.ID(), "transient": true})
}

// broadcast hands a signal to every agent with a matching route and says
// how many took it; refusals (full queues) are also filed as a dead letter.
func (in ingress) broadcast(_ context.Context, d *natsbus.Delivery) {
	if err := in.opts.admitBroadcast(d.Signal.Type()); err != nil {
		in.refuse(d, bus.ReasonForbidden, err)
		return
	}
	delivered, err := in.rt.Broadcast(d.Signal)
	if err != nil {
		in.b.DeadLetter(d.Msg, err)
	}
	reply := struct {
		ID        string `json:"id"`
		Delivered int    `json:"delivered"`
		Refused   string `json:"refused,omitempty"`
	}{ID: d.Signal.ID(), Delivered: delivered}
	if err != nil {
		reply.Refused = err.Error()
	}
	d.Respond(reply)
}
