package natsbus

import (
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/bus"
)

// Partitioned input (cluster mode). Several nodes serve one prefix, and
// each agent is decided by the node that owns its partition. A request or
// a signal reaches one node of the cluster (signals to agents and the
// control plane are queue subscriptions); when that node does not own the
// partition the input belongs to, it forwards the message, as it came, to
// <prefix>.cluster.part.<p>, which only the owner subscribes to. The
// owner acknowledges the forward at once and serves the message exactly
// as if it had received it itself — the same checks, the same handler —
// answering the original sender directly. A forward nobody acknowledges
// (no owner subscribed: the partition is moving, or its owner died and
// its lease has not expired yet) is refused unavailable where it came in,
// with a dead letter: never dropped.
//
// Only nodes may publish on <prefix>.cluster.>: a forwarded message names
// the subject it is served as, so whoever may publish there may reach any
// verb. The node checks that the subject is one of its own input
// subjects; the NATS server's permissions must keep clients out.

// Partitioner says which input belongs to which partition and which
// partitions this node serves.
type Partitioner struct {
	// Of returns the partition msg belongs to, or false when it is not
	// partitioned (it is served where it arrives).
	Of func(msg *nats.Msg) (p int, ok bool)
	// Serves reports whether this node serves partition p now.
	Serves func(p int) bool
	// ForwardTimeout bounds the wait for the owner's acknowledgement; zero
	// means DefaultForwardTimeout.
	ForwardTimeout time.Duration
}

// DefaultForwardTimeout is Partitioner.ForwardTimeout's default.
const DefaultForwardTimeout = 5 * time.Second

// Headers of a forwarded message.
const (
	hdrForwardSubject = "Jido-Forward-Subject"
	hdrForwardReply   = "Jido-Forward-Reply"
)

// partitions is the Bus's state for partitioned input.
type partitions struct {
	mu sync.Mutex
	// handlers are the NATS callbacks of the node's input subjects, by
	// subscribed subject, for forwarded messages to be served by.
	handlers map[string]nats.MsgHandler
	// agentHandler serves forwarded signals to agents (a wildcard subject).
	agentHandler nats.MsgHandler
	subs         map[int]*nats.Subscription
}

// partitionSubject is where the owner of partition p takes forwards.
func (b *Bus) partitionSubject(p int) string {
	return b.opts.Subjects.Name() + ".cluster.part." + strconv.Itoa(p)
}

// remember notes the handler of subject, for forwarded messages.
func (b *Bus) remember(subject string, h nats.MsgHandler, agents bool) {
	b.parts.mu.Lock()
	defer b.parts.mu.Unlock()
	if b.parts.handlers == nil {
		b.parts.handlers = make(map[string]nats.MsgHandler)
	}
	if agents {
		b.parts.agentHandler = h
		return
	}
	b.parts.handlers[subject] = h
}

// forward sends msg to the owner of its partition when this node does
// not serve it, and reports whether it did (the caller then does nothing
// more with msg). The refusal, if the owner never acknowledges, is the
// forwarding goroutine's.
func (b *Bus) forward(msg *nats.Msg) bool {
	pr := b.opts.Partitions
	if pr == nil {
		return false
	}
	p, ok := pr.Of(msg)
	if !ok || pr.Serves(p) {
		return false
	}
	if msg.Header.Get(hdrForwardSubject) != "" {
		// Forwarded already, and this node, which took it as the owner,
		// no longer serves the partition: no second hop.
		b.refuse(msg, bus.Errorf(bus.ReasonUnavailable, "partition %d moved while %s was forwarded to its owner; retry", p, msg.Subject))
		return true
	}
	if err := b.enter(); err != nil {
		b.refuse(msg, err)
		return true
	}
	fwd := nats.NewMsg(b.partitionSubject(p))
	for k, v := range msg.Header {
		fwd.Header[k] = v
	}
	fwd.Header.Set(hdrForwardSubject, msg.Subject)
	if msg.Reply != "" {
		fwd.Header.Set(hdrForwardReply, msg.Reply)
	}
	fwd.Data = msg.Data
	timeout := pr.ForwardTimeout
	if timeout <= 0 {
		timeout = DefaultForwardTimeout
	}
	go func() {
		defer b.inflight.Done()
		_, err := b.nc.RequestMsg(fwd, timeout)
		switch {
		case err == nil:
		case errors.Is(err, nats.ErrNoResponders):
			b.refuse(msg, bus.Errorf(bus.ReasonUnavailable, "no node serves partition %d right now (it is moving, or its node stopped and the cluster has not noticed yet); nothing was recorded; retry", p))
		default:
			b.refuse(msg, bus.Errorf(bus.ReasonUnavailable, "the node that owns partition %d did not take %s: %v; it may or may not have been recorded; retry with the same id", p, msg.Subject, err))
		}
	}()
	return true
}

// ServePartition takes the forwards of partition p from the other nodes:
// call it once the node serves p (Partitioner.Serves), and
// StopPartition when it gives p up.
func (b *Bus) ServePartition(p int) error {
	b.parts.mu.Lock()
	defer b.parts.mu.Unlock()
	if b.parts.subs == nil {
		b.parts.subs = make(map[int]*nats.Subscription)
	}
	if b.parts.subs[p] != nil {
		return nil
	}
	sub, err := b.nc.Subscribe(b.partitionSubject(p), b.takeForward)
	if err != nil {
		return fmt.Errorf("subscribe %s: %w", b.partitionSubject(p), err)
	}
	if err := sub.SetPendingLimits(1<<20, 1<<30); err != nil {
		_ = sub.Unsubscribe()
		return err
	}
	// Once it returns, the server knows the subscription: a forward sent
	// after Serves said yes finds it.
	if err := b.nc.Flush(); err != nil {
		_ = sub.Unsubscribe()
		return fmt.Errorf("subscribe %s: %w", b.partitionSubject(p), err)
	}
	b.parts.subs[p] = sub
	return nil
}

// StopPartition stops taking the forwards of partition p. Forwards
// already delivered are still served (and refused by their handler if the
// partition is gone by then).
func (b *Bus) StopPartition(p int) {
	b.parts.mu.Lock()
	sub := b.parts.subs[p]
	delete(b.parts.subs, p)
	b.parts.mu.Unlock()
	if sub != nil {
		_ = sub.Unsubscribe()
	}
}

// stopPartitions unsubscribes from every partition (Shutdown).
func (b *Bus) stopPartitions() {
	b.parts.mu.Lock()
	subs := b.parts.subs
	b.parts.subs = nil
	b.parts.mu.Unlock()
	for _, sub := range subs {
		_ = sub.Unsubscribe()
	}
}

// takeForward serves a forwarded message as the message it carries.
func (b *Bus) takeForward(fwd *nats.Msg) {
	subject := fwd.Header.Get(hdrForwardSubject)
	h := b.handlerOf(subject)
	if h == nil {
		// Not one of the node's input subjects: whoever published it
		// here is not a node of this cluster.
		b.log.Warn("forwarded message for no input subject; dropped", "subject", subject, "via", fwd.Subject)
		b.DeadLetter(fwd, bus.Errorf(bus.ReasonForbidden, "a message forwarded on %s names %q, which is not an input subject of this node", fwd.Subject, subject))
		return
	}
	_ = fwd.Respond(nil) // taken: the sender's node stops waiting
	msg := &nats.Msg{Subject: subject, Reply: fwd.Header.Get(hdrForwardReply), Header: fwd.Header, Data: fwd.Data, Sub: fwd.Sub}
	h(msg)
}

// handlerOf returns the handler of an input subject, nil for any other.
func (b *Bus) handlerOf(subject string) nats.MsgHandler {
	b.parts.mu.Lock()
	defer b.parts.mu.Unlock()
	if h := b.parts.handlers[subject]; h != nil {
		return h
	}
	if addr, err := b.opts.Subjects.Parse(subject); err == nil && addr.Kind == bus.KindAgent {
		return b.parts.agentHandler
	}
	return nil
}

// SetPartitioner turns cluster mode on (Options.Partitions) for a Bus
// whose partitioner needs the Bus to exist first; call it before any
// Handle*.
func (b *Bus) SetPartitioner(p *Partitioner) { b.opts.Partitions = p }
