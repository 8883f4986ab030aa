package main

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/jido-bus/jido-bus/agents/runtime"
	"github.com/jido-bus/jido-bus/agents/runtime/agentapi"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/natsbus"
	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/jido-bus/jido-bus/eventlog/logapi"
)

// DeadLetterStream is the log stream every refused input is appended to.
const DeadLetterStream = "dlq"

// node wires the parts of a running jido-bus together on the bus.
type node struct {
	log     *slog.Logger
	bus     *natsbus.Bus
	evlog   *eventlog.Log
	logAPI  *logapi.Server
	rt      *runtime.Runtime
	started time.Time
}

// pingReply answers <prefix>.api.ping.
type pingReply struct {
	Version  string        `json:"version"`
	ServerID string        `json:"server_id,omitempty"`
	Uptime   string        `json:"uptime"`
	Stats    natsbus.Stats `json:"stats"`
}

func (n *node) register() error {
	subjects := n.bus.Subjects()
	if err := n.bus.HandleAPI(subjects.Ping(), n.ping); err != nil {
		return err
	}
	api, err := logapi.Serve(n.bus.Conn(), n.evlog, subjects)
	if err != nil {
		return err
	}
	n.logAPI = api
	if err := agentapi.Serve(n.bus, n.rt); err != nil {
		return err
	}
	if err := n.bus.HandleSignals(bus.KindAgent, n.toAgent); err != nil {
		return err
	}
	return n.bus.HandleSignals(bus.KindSignal, n.broadcast)
}

// close stops taking input (the bus, then the log API), then lets the
// agents finish what they are doing; they are not stopped, and come back
// on the next start.
func (n *node) close() error {
	err := n.bus.Close()
	if n.logAPI != nil {
		err = errors.Join(err, n.logAPI.Close())
	}
	return errors.Join(err, n.rt.Close())
}

func (n *node) ping(context.Context, []byte) (any, error) {
	return pingReply{
		Version:  version,
		ServerID: n.bus.Conn().ConnectedServerId(),
		Uptime:   time.Since(n.started).Round(time.Millisecond).String(),
		Stats:    n.bus.Stats(),
	}, nil
}

// fileDeadLetter appends a refused input to the log stream "dlq", so dead
// letters outlive the NATS message that announced them.
func (n *node) fileDeadLetter(d natsbus.DeadLetter) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := n.evlog.Append(ctx, DeadLetterStream, eventlog.AnyVersion, d.Signal()); err != nil {
		n.log.Error("append dead letter to the log", "stream", DeadLetterStream, "reason", d.Reason, "subject", d.Subject, "err", err)
	}
}

// toAgent hands a signal to the agent its subject names. A call is
// answered after the commit with {"state":…,"version":N}; a signal refused
// before the commit (unknown agent, full queue) is a dead letter; a
// decision that failed was recorded in the agent's stream and is answered
// with its error.
func (n *node) toAgent(_ context.Context, d *natsbus.Delivery) {
	var reply func(runtime.Reply, error)
	if d.IsCall() {
		reply = func(r runtime.Reply, err error) {
			switch {
			case err == nil:
				d.Respond(r)
			case r.Committed:
				d.Fail(err)
			default:
				d.Reject(err)
			}
		}
	}
	if err := n.rt.Deliver(d.Address.AgentID, d.Signal, reply); err != nil {
		d.Reject(err)
	}
}

// broadcast hands a signal to every agent with a matching route and says
// how many took it; refusals (full queues) are also filed as a dead letter.
func (n *node) broadcast(_ context.Context, d *natsbus.Delivery) {
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
