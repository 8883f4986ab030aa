package node

import (
	"context"

	"github.com/jido-bus/jido-bus/agents/runtime"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/natsbus"
	"github.com/jido-bus/jido-bus/conversation"
)

// toAgent hands a signal to the agent its subject names. A call is
// answered after the commit with {"state":…,"version":N}; a signal refused
// before the commit is a dead letter — here when the runtime does not
// take it (unknown agent, full queue), through deadLetterRefused when it
// took it and then refused it (its agent's decision refused it, the log
// would not commit it, the node shut down); a decision that failed was
// recorded in the agent's stream and is answered with its error. A transient conversation event (an assistant delta) is
// published for live views and never committed.
func (n *Node) toAgent(_ context.Context, d *natsbus.Delivery) {
	if err := runtimeSignal(d.Signal.Type()); err != nil {
		n.metrics.Refused(bus.ReasonForbidden)
		d.Reject(err)
		return
	}
	if err := n.conv.Admit(d.Address.AgentID, d.Signal.Type()); err != nil {
		n.metrics.Refused(bus.ReasonForbidden)
		d.Reject(err)
		return
	}
	if conversation.IsTransient(d.Signal.Type()) {
		n.publishTransient(d)
		return
	}
	if err := n.projectSignal(d.Address.AgentID); err != nil {
		n.metrics.Refused(bus.ReasonForbidden)
		d.Reject(err)
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
	if err := n.rt.Deliver(d.Address.AgentID, d.Signal, reply); err != nil {
		d.Reject(err)
	}
}

func (n *Node) publishTransient(d *natsbus.Delivery) {
	if _, err := n.rt.State(d.Address.AgentID); err != nil {
		n.metrics.Refused(bus.ErrorType(err)) // the runtime was not asked to take it, so did not count it
		d.Reject(err)
		return
	}
	if err := n.bus.Publish(n.subjects.Emit(d.Address.AgentID, d.Signal.Type()), &d.Signal); err != nil {
		d.Fail(err)
		return
	}
	d.Respond(map[string]any{"id": d.Signal.ID(), "transient": true})
}

// broadcast hands a signal to every agent with a matching route and says
// how many took it; refusals (full queues) are also filed as a dead letter.
func (n *Node) broadcast(_ context.Context, d *natsbus.Delivery) {
	if err := n.broadcastAllowed(d.Signal.Type()); err != nil {
		n.metrics.Refused(bus.ReasonForbidden)
		d.Reject(err)
		return
	}
	delivered, err := n.rt.Broadcast(d.Signal)
	if err != nil {
		n.bus.DeadLetter(d.Msg, err)
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

// broadcastAllowed refuses a broadcast of a runtime type, of a project
// signal or of a conversation event: every project's or conversation's
// agent routes them, so one publish would close every project or put the
// same event into every conversation.
func (n *Node) broadcastAllowed(typ string) error {
	if err := runtimeSignal(typ); err != nil {
		return err
	}
	if err := n.projectBroadcast(typ); err != nil {
		return err
	}
	return n.conv.AdmitBroadcast(typ)
}
