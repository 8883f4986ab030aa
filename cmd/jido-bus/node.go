package main

import (
	"context"
	"errors"
	"log/slog"
	"time"

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
	if err := n.bus.HandleSignals(bus.KindAgent, n.toAgent); err != nil {
		return err
	}
	return n.bus.HandleSignals(bus.KindSignal, n.broadcast)
}

// close stops taking input: the bus first, then the log API.
func (n *node) close() error {
	err := n.bus.Close()
	if n.logAPI != nil {
		err = errors.Join(err, n.logAPI.Close())
	}
	return err
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
