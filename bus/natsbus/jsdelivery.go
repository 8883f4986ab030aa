package natsbus

import (
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/bus"
)

// A message whose reply subject is a JetStream ack ($JS.ACK.…) was
// delivered by a stream's push consumer, not sent by a client: JetStream
// does not check a push consumer's deliver subject against its creator's
// permissions, so anyone who may create a consumer on a stream (a client
// reading the emit stream) can have every stored message delivered into
// the node's subjects, up to a gigabyte a consumer. The node takes no
// input from a stream. It refuses the consumer's first delivery with one
// dead letter, deletes the consumer (what stops the flood: a refusal
// alone is delivered again), and drops the deliveries already on their
// way, counted as rejected, under that one dead letter.

// jsConsumers remembers the consumers refused, by "<stream> <consumer>",
// so that the deliveries already on their way when one is deleted are
// dropped under its one dead letter. A consumer made again under the same
// name starts its delivery sequence at 1 again, and is refused anew.
type jsConsumers struct {
	mu   sync.Mutex
	seen map[string]bool
}

// maxRemembered bounds jsConsumers: past it, it starts afresh (what is
// forgotten costs one more dead letter, not a silent flood).
const maxRemembered = 4096

// refuse says whether the delivery of consumer key at consumer sequence
// seq (delivered the n-th time) is the first of that consumer.
func (c *jsConsumers) refuse(key string, seq, n uint64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen[key] && !(seq == 1 && n == 1) {
		return false
	}
	if c.seen == nil || len(c.seen) >= maxRemembered {
		c.seen = map[string]bool{}
	}
	c.seen[key] = true
	return true
}

// consumerDeleteTimeout bounds the request that deletes a consumer.
const consumerDeleteTimeout = 5 * time.Second

// refuseStreamDelivery handles msg when a JetStream consumer delivered it
// and reports whether it did.
func (b *Bus) refuseStreamDelivery(msg *nats.Msg) bool {
	if !strings.HasPrefix(msg.Reply, "$JS.ACK.") {
		return false
	}
	meta, err := msg.Metadata()
	msg.Reply = "" // never answered, never acked
	if err != nil {
		b.refuse(msg, bus.Errorf(bus.ReasonForbidden, "%s came with a JetStream ack subject the node cannot read (%v): the node takes no deliveries from a stream", msg.Subject, err))
		return true
	}
	if !b.jsConsumers.refuse(meta.Stream+" "+meta.Consumer, meta.Sequence.Consumer, meta.NumDelivered) {
		// Already on its way before the consumer was deleted: filed
		// under the consumer's one dead letter.
		b.metrics.rejected.Add(1)
		return true
	}
	if b.enter() == nil { // a bus that is stopping deletes nothing
		go func() {
			defer b.inflight.Done()
			b.deleteConsumer(meta.Domain, meta.Stream, meta.Consumer)
		}()
	}
	b.refuse(msg, bus.Errorf(bus.ReasonForbidden, "consumer %s of stream %s delivered stored messages into the node's subject %s: the node takes no input from a stream (a push consumer's deliver subject is not checked against its creator's permissions); the consumer is deleted, and the deliveries already on their way are dropped under this one dead letter", meta.Consumer, meta.Stream, msg.Subject))
	return true
}

// deleteConsumer deletes the consumer that delivered into the node; its
// failure (a node whose user may not delete consumers) is logged.
func (b *Bus) deleteConsumer(domain, stream, consumer string) {
	api := "$JS.API"
	if domain != "" {
		api = "$JS." + domain + ".API"
	}
	subject := api + ".CONSUMER.DELETE." + stream + "." + consumer
	reply, err := b.nc.Request(subject, nil, consumerDeleteTimeout)
	if err == nil && strings.Contains(string(reply.Data), `"error"`) {
		err = errors.New(string(reply.Data))
	}
	if err != nil {
		b.log.Error("a consumer that delivered into the node's subjects could not be deleted: delete it (nats consumer rm) and the user who made it may keep sending", "stream", stream, "consumer", consumer, "err", err)
		return
	}
	b.log.Warn("deleted a consumer that delivered into the node's subjects", "stream", stream, "consumer", consumer)
}
