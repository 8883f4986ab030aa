package natsbus

import (
	"context"
	"fmt"
	"sync"

	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/codec"
)

// Delivery is one decoded signal and the means to answer it. A handler
// that receives a call (IsCall) must answer it exactly once, with Respond
// or Reject, possibly later and from another goroutine (an agent answers
// after its commit). Answers after the first are ignored.
type Delivery struct {
	Address bus.Address
	Signal  bus.Signal
	Mode    codec.Mode
	Msg     *nats.Msg

	bus  *Bus
	once sync.Once
}

// IsCall reports whether the sender waits for a reply.
func (d *Delivery) IsCall() bool { return d.Msg.Reply != "" }

// Respond answers a call with {"ok":true, …result's members…}. It does
// nothing for a cast.
func (d *Delivery) Respond(result any) {
	d.once.Do(func() {
		body, err := bus.OKReply(result)
		if err != nil {
			body = bus.ErrorReply(err)
		}
		d.bus.reply(d.Msg, body)
	})
}

// Reject refuses the signal: a dead letter under err's reason and, for a
// call, an error reply.
func (d *Delivery) Reject(err error) {
	d.once.Do(func() { d.bus.reject(d.Msg, err) })
}

// Fail answers a call with err without filing a dead letter: for a signal
// that was accepted (and recorded) but whose handling failed. It does
// nothing for a cast.
func (d *Delivery) Fail(err error) {
	d.once.Do(func() { d.bus.reply(d.Msg, bus.ErrorReply(err)) })
}

// Handler receives each valid signal. It runs on the subscription's
// goroutine, so it must hand long work to another goroutine and return.
type Handler func(ctx context.Context, d *Delivery)

// Middleware wraps a Handler; see HandleSignals for the order.
type Middleware func(Handler) Handler

// AgentQueueGroup is the queue group of the subscription to signals for
// agents in cluster mode (Options.Partitions).
const AgentQueueGroup = "jido-agents"

// HandleSignals subscribes to every subject of kind (bus.KindAgent or
// bus.KindSignal) and hands each valid signal to h. Middleware run in the
// order given: the first is the outermost and sees the delivery first.
func (b *Bus) HandleSignals(kind string, h Handler, mw ...Middleware) error {
	if kind != bus.KindAgent && kind != bus.KindSignal {
		return fmt.Errorf("natsbus: HandleSignals takes %q or %q, not %q", bus.KindAgent, bus.KindSignal, kind)
	}
	for i := len(mw) - 1; i >= 0; i-- {
		h = mw[i](h)
	}
	subject := b.opts.Subjects.All(kind)
	handler := func(msg *nats.Msg) { b.dispatch(msg, h) }
	var sub *nats.Subscription
	var err error
	if b.opts.Partitions != nil && kind == bus.KindAgent {
		// One node of the cluster takes each signal, and hands it to
		// the owner of the agent's partition when that is another.
		b.remember(subject, handler, true)
		sub, err = b.nc.QueueSubscribe(subject, AgentQueueGroup, handler)
	} else {
		sub, err = b.nc.Subscribe(subject, handler)
	}
	if err != nil {
		return fmt.Errorf("subscribe %s: %w", subject, err)
	}
	return b.track(sub)
}

func (b *Bus) dispatch(msg *nats.Msg, h Handler) {
	if b.refuseStreamDelivery(msg) {
		return
	}
	if err := b.checkReply(msg); err != nil {
		b.refuse(msg, err)
		return
	}
	if b.forward(msg) {
		return
	}
	if err := b.enter(); err != nil {
		b.refuse(msg, err) // a signal refused, not lost: answered and dead-lettered
		return
	}
	defer b.inflight.Done()
	d, err := b.Decode(msg)
	if err != nil {
		b.refuse(msg, err)
		return
	}
	b.metrics.received.Add(1)
	h(b.ctx, d)
}

// Decode parses msg's subject and decodes its signal into a Delivery,
// without handing it to anyone. Errors are *bus.Error values.
func (b *Bus) Decode(msg *nats.Msg) (*Delivery, error) {
	addr, err := b.opts.Subjects.Parse(msg.Subject)
	if err != nil {
		return nil, err
	}
	if addr.Kind != bus.KindAgent && addr.Kind != bus.KindSignal && addr.Kind != bus.KindEmit {
		return nil, bus.Errorf(bus.ReasonInvalidSubject, "subject %q carries no signal", msg.Subject)
	}
	s, mode, err := b.decoder.Decode(msg, addr.Type)
	if err != nil {
		return nil, fmt.Errorf("subject %s: %w", msg.Subject, err)
	}
	return &Delivery{Address: addr, Signal: s, Mode: mode, Msg: msg, bus: b}, nil
}

// DeadLetter files msg as a dead letter under err's reason without
// answering anyone: for input refused after its sender was answered (a
// broadcast some agents could not take).
func (b *Bus) DeadLetter(msg *nats.Msg, err error) {
	b.metrics.rejected.Add(1)
	b.deadLetter(msg, err)
}

// refuse is reject for a refusal the Bus itself decides (the door, the
// shutdown gate, an unreadable request, a handler's limit): it is also
// reported to Options.OnRefused. Refusals a handler decides go through
// Delivery.Reject or DeadLetter, and the handler counts them.
func (b *Bus) refuse(msg *nats.Msg, err error) {
	if b.opts.OnRefused != nil {
		b.opts.OnRefused(bus.ErrorType(err))
	}
	b.reject(msg, err)
}

// reject files msg as a dead letter and answers a call with the error.
func (b *Bus) reject(msg *nats.Msg, err error) {
	b.metrics.rejected.Add(1)
	// Filed before the answer: a caller told of the error finds it
	// counted and its dead letter published.
	b.deadLetter(msg, err)
	b.reply(msg, bus.ErrorReply(err))
}
