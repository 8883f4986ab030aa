package natsbus

import (
	"encoding/json"
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
//
// A consumer made again under a refused one's name is another flood. Its
// first delivery (consumer sequence 1, delivered once) says so, but that
// delivery can be lost — the server counts it delivered and sends it
// again only after the consumer's ack wait, as a redelivery — so a
// delivery of a name already refused that arrives once its delete has
// finished asks for another delete (at most one a second a name: the
// deliveries of the deleted consumer still on their way ask too). When
// that one finds a consumer of the name that delivers into the
// subscription the delivery came on, it is the new flood: it is deleted
// and gets its dead letter; one that delivers elsewhere is someone's own
// and is left alone.

// jsConsumers remembers the consumers refused, by "<stream> <consumer>".
type jsConsumers struct {
	mu   sync.Mutex
	seen map[string]*refusedConsumer
	// again is how long after a delete of a name finished a delivery of
	// that name asks for another; zero means redeleteAfter.
	again time.Duration
}

// refusedConsumer is what the node knows of a consumer name it refused.
type refusedConsumer struct {
	deleting bool      // a delete is on its way
	deleted  time.Time // when the last one finished
}

// maxRemembered bounds jsConsumers: past it, it starts afresh (what is
// forgotten costs one more dead letter, not a silent flood).
const maxRemembered = 4096

// redeleteAfter is jsConsumers.again's default.
const redeleteAfter = time.Second

// deliveryVerdict is what the node does with one delivery from a stream.
type deliveryVerdict int

const (
	dropDelivery deliveryVerdict = iota // its consumer's dead letter covers it
	refuseFirst                         // a consumer's first: dead letter, delete
	deleteAgain                         // its name's delete finished: delete again
)

// judge says what to do with the delivery of consumer key at consumer
// sequence seq, delivered the n-th time, at now. A verdict other than
// dropDelivery must be followed by deleted once the delete is done.
func (c *jsConsumers) judge(key string, seq, n uint64, now time.Time) deliveryVerdict {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := c.seen[key]
	switch {
	case r == nil || seq == 1 && n == 1:
		if c.seen == nil || len(c.seen) >= maxRemembered {
			c.seen = map[string]*refusedConsumer{}
		}
		c.seen[key] = &refusedConsumer{deleting: true}
		return refuseFirst
	case !r.deleting && now.Sub(r.deleted) >= orDefault(c.again, redeleteAfter):
		r.deleting = true
		return deleteAgain
	}
	return dropDelivery
}

// deleted notes that the delete judge asked for of key finished at now.
func (c *jsConsumers) deleted(key string, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if r := c.seen[key]; r != nil {
		r.deleting, r.deleted = false, now
	}
}

// orDefault is d, or def when d is zero.
func orDefault(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

// consumerDeleteTimeout bounds a request on a consumer (its info, its
// delete).
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
	key := meta.Stream + " " + meta.Consumer
	verdict := b.jsConsumers.judge(key, meta.Sequence.Consumer, meta.NumDelivered, time.Now())
	if verdict == dropDelivery {
		// Already on its way before the consumer was deleted: filed
		// under the consumer's one dead letter.
		b.metrics.rejected.Add(1)
		return true
	}
	if verdict == refuseFirst {
		b.refuse(msg, bus.Errorf(bus.ReasonForbidden, "consumer %s of stream %s delivered stored messages into the node's subject %s: the node takes no input from a stream (a push consumer's deliver subject is not checked against its creator's permissions); the consumer is deleted, and the deliveries already on their way are dropped under this one dead letter", meta.Consumer, meta.Stream, msg.Subject))
	} else {
		b.metrics.rejected.Add(1) // filed below if it was a new consumer's
	}
	if b.enter() != nil { // a bus that is stopping deletes nothing
		return true
	}
	listening := ""
	if msg.Sub != nil {
		listening = msg.Sub.Subject
	}
	go func() {
		defer b.inflight.Done()
		defer func() { b.jsConsumers.deleted(key, time.Now()) }()
		if verdict == deleteAgain {
			// Most likely a delivery of the deleted consumer that was still
			// on its way; a consumer of the name that delivers elsewhere
			// now is someone's own, and is left alone.
			deliver, found, err := b.consumerDeliverSubject(meta.Domain, meta.Stream, meta.Consumer)
			if err == nil && (!found || !subjectMatches(listening, deliver)) {
				return
			}
		}
		found, err := b.deleteConsumer(meta.Domain, meta.Stream, meta.Consumer)
		switch {
		case err != nil:
			b.log.Error("a consumer that delivered into the node's subjects could not be deleted: delete it (nats consumer rm) and the user who made it may keep sending", "stream", meta.Stream, "consumer", meta.Consumer, "err", err)
		case !found:
			b.log.Debug("a consumer that delivered into the node's subjects is gone already", "stream", meta.Stream, "consumer", meta.Consumer)
		case verdict == deleteAgain:
			b.log.Warn("deleted a consumer made again under the name of one that delivered into the node's subjects", "stream", meta.Stream, "consumer", meta.Consumer)
			if b.opts.OnRefused != nil {
				b.opts.OnRefused(bus.ReasonForbidden)
			}
			b.deadLetter(msg, bus.Errorf(bus.ReasonForbidden, "consumer %s of stream %s, made again under the name of a consumer the node deleted, delivered stored messages into the node's subject %s (its first delivery did not reach the node): the node takes no input from a stream; the consumer is deleted again, and the deliveries already on their way are dropped under this one dead letter", meta.Consumer, meta.Stream, msg.Subject))
		default:
			b.log.Warn("deleted a consumer that delivered into the node's subjects", "stream", meta.Stream, "consumer", meta.Consumer)
		}
	}()
	return true
}

// codeConsumerNotFound is JetStream's error code for a consumer that
// does not exist.
const codeConsumerNotFound = 10014

// deleteConsumer deletes a consumer that delivered into the node; found
// is false when there was none of that name.
func (b *Bus) deleteConsumer(domain, stream, consumer string) (found bool, err error) {
	return b.consumerAPI(domain, "DELETE", stream, consumer, nil)
}

// consumerDeliverSubject returns the deliver subject of a consumer; found
// is false when there is none of that name.
func (b *Bus) consumerDeliverSubject(domain, stream, consumer string) (deliver string, found bool, err error) {
	var info struct {
		Config struct {
			DeliverSubject string `json:"deliver_subject"`
		} `json:"config"`
	}
	found, err = b.consumerAPI(domain, "INFO", stream, consumer, &info)
	return info.Config.DeliverSubject, found, err
}

// consumerAPI makes the JetStream API request $JS.API.CONSUMER.<verb> on
// a consumer and decodes its answer into into (when not nil); found is
// false when the consumer does not exist.
func (b *Bus) consumerAPI(domain, verb, stream, consumer string, into any) (found bool, err error) {
	api := "$JS.API"
	if domain != "" {
		api = "$JS." + domain + ".API"
	}
	reply, err := b.nc.Request(api+".CONSUMER."+verb+"."+stream+"."+consumer, nil, consumerDeleteTimeout)
	if err != nil {
		return false, err
	}
	var resp struct {
		Error *struct {
			ErrCode int `json:"err_code"`
		} `json:"error"`
	}
	if err := json.Unmarshal(reply.Data, &resp); err != nil {
		return false, errors.New(string(reply.Data))
	}
	switch {
	case resp.Error == nil:
	case resp.Error.ErrCode == codeConsumerNotFound:
		return false, nil
	default:
		return false, errors.New(string(reply.Data))
	}
	if into != nil {
		if err := json.Unmarshal(reply.Data, into); err != nil {
			return false, err
		}
	}
	return true, nil
}

// subjectMatches reports whether a message on subject reaches a NATS
// subscription to filter ('*' one token, '>' the rest).
func subjectMatches(filter, subject string) bool {
	for filter != "" && subject != "" {
		f, frest, _ := strings.Cut(filter, ".")
		s, srest, _ := strings.Cut(subject, ".")
		switch {
		case f == ">":
			return true
		case f != "*" && f != s:
			return false
		}
		filter, subject = frest, srest
		if (filter == "") != (subject == "") {
			return false
		}
	}
	return filter == subject
}
