package main

import (
	"context"
	"time"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/natsbus"
)

// node wires the parts of a running jido-bus together on the bus.
type node struct {
	bus     *natsbus.Bus
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
	if err := n.bus.HandleSignals(bus.KindAgent, n.toAgent); err != nil {
		return err
	}
	return n.bus.HandleSignals(bus.KindSignal, n.broadcast)
}

func (n *node) ping(context.Context, []byte) (any, error) {
	return pingReply{
		Version:  version,
		ServerID: n.bus.Conn().ConnectedServerId(),
		Uptime:   time.Since(n.started).Round(time.Millisecond).String(),
		Stats:    n.bus.Stats(),
	}, nil
}

// toAgent handles a signal addressed to one agent. No agent runs on this
// node yet, so every agent id is unknown: the signal is refused as
// not_found, which files a dead letter and answers a call.
func (n *node) toAgent(_ context.Context, d *natsbus.Delivery) {
	d.Reject(bus.Errorf(bus.ReasonNotFound, "no agent %q is running on this node", d.Address.AgentID))
}

// broadcast handles a signal to every agent whose routes match; with no
// agents running it reaches none, and a call is told so.
func (n *node) broadcast(_ context.Context, d *natsbus.Delivery) {
	d.Respond(struct {
		ID        string `json:"id"`
		Delivered int    `json:"delivered"`
	}{ID: d.Signal.ID(), Delivered: 0})
}
