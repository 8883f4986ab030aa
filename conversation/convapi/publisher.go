package convapi

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/codec"
	"github.com/jido-bus/jido-bus/bus/dispatch"
	"github.com/jido-bus/jido-bus/conversation"
	"github.com/jido-bus/jido-bus/eventlog"
)

// Headers of a published conversation event, beside its CloudEvents
// attributes.
const (
	// HeaderSeq is the event's sequence in its stream (decimal), the
	// position a client compares with the log's when it switches from
	// reading the log to following live: drop what has Jido-Seq ≤ the last
	// sequence read.
	HeaderSeq = "Jido-Seq"
	// HeaderStream is the event's stream, conversation/<project>/<conv>.
	HeaderStream = "Jido-Stream"
)

// publishRetry bounds the wait between two attempts to publish an event
// NATS did not take (the connection is closed or its reconnect buffer is
// full): the same event is tried again, never skipped.
const (
	publishRetryMin = 10 * time.Millisecond
	publishRetryMax = time.Second
)

// Publisher publishes every committed conversation event (a
// conversation.* entry of a conversation/<key> stream) on
// <prefix>.emit.<key>.<type>, in the codec the node's emits use, with
// HeaderSeq and HeaderStream.
//
// It follows the log through an eventlog.Subscription opened at the log's
// head when the node starts, so an event is published only once it is
// durable (after its commit, by construction) and in the global order,
// hence in order per stream. Writers never wait for it: the subscription
// reads from disk wherever it stands, so a publisher that falls behind
// (NATS slow or down) holds a position, not a queue, and catches up from
// the log by sequence. An event NATS refuses is retried until it is
// taken or the publisher stops; none is skipped. Only a damaged log entry
// (eventlog.CorruptError, which the log reports once and passes over) is
// not published, and that is logged.
//
// A client follows a conversation without a gap or a duplicate this way
// (the node's TestConvCatchUpSwitchOver): subscribe to <prefix>.emit.<key>.> first;
// then read the stream conversation/<key> from the log (jido.api.log.show,
// `jido-bus log show conversation/<key>`) up to its last entry, seq N;
// then take the live messages, dropping those with Jido-Seq ≤ N. Messages
// without Jido-Seq are not log entries (deltas, the runtime's lifecycle
// emits).
type Publisher struct {
	sub      *eventlog.Subscription
	subjects bus.Subjects
	log      *slog.Logger
	// publish hands a message to NATS; tests make it fail.
	publish func(*nats.Msg) error

	stop context.CancelFunc
	done chan struct{}
}

// NewPublisher subscribes to l from its current head, for publish to
// hand each message to NATS (a connection's PublishMsg); Start runs it.
func NewPublisher(l *eventlog.Log, subjects bus.Subjects, publish func(*nats.Msg) error, log *slog.Logger) (*Publisher, error) {
	sub, err := l.Subscribe(eventlog.SubscribeOptions{Types: conversation.TypePattern})
	if err != nil {
		return nil, err
	}
	return &Publisher{sub: sub, subjects: subjects, log: log, publish: publish, done: make(chan struct{})}, nil
}

// Start runs the publisher in a goroutine that Close stops.
func (p *Publisher) Start() {
	ctx, cancel := context.WithCancel(context.Background())
	p.stop = cancel
	go func() {
		defer close(p.done)
		p.run(ctx)
	}()
}

// Close publishes what is committed by now, trying each event once more,
// and stops the publisher. The node calls it once its agents have
// committed their last events and before NATS drains, so that a client
// sees them. It does not wait on NATS: a publish only buffers (or fails
// at once when the connection's buffer is full or closed).
func (p *Publisher) Close() error {
	if p.stop != nil {
		p.stop()
		<-p.done
	}
	return p.sub.Close()
}

func (p *Publisher) run(ctx context.Context) {
	for {
		e, err := p.sub.Next(ctx)
		if ctx.Err() != nil {
			p.drain()
			return
		}
		if err != nil && !p.handle(err) {
			return
		}
		if err == nil {
			p.deliver(ctx, e)
		}
	}
}

// drain publishes, once stop was asked for, the entries durable by now,
// trying each once: the node is closing, so NATS still takes them.
func (p *Publisher) drain() {
	for {
		e, ok, err := p.sub.TryNext()
		if err != nil {
			if !p.handle(err) {
				return
			}
			continue
		}
		if !ok {
			return
		}
		if msg, ok := p.message(e); ok {
			if err := p.publish(msg); err != nil {
				p.log.Warn("conversation event not published at shutdown", "stream", e.Stream, "seq", e.Seq, "err", err)
			}
		}
	}
}

// handle logs a subscription error and says whether to go on.
func (p *Publisher) handle(err error) bool {
	if _, corrupt := errors.AsType[*eventlog.CorruptError](err); corrupt {
		p.log.Error("conversation event damaged in the log; not published", "err", err)
		return true
	}
	if !errors.Is(err, eventlog.ErrClosed) {
		p.log.Error("conversation publication stopped", "err", err)
	}
	return false
}

// deliver publishes e, retrying with a growing pause until NATS takes it
// or ctx ends (the node closes: then it is tried once more).
func (p *Publisher) deliver(ctx context.Context, e eventlog.Entry) {
	msg, ok := p.message(e)
	if !ok {
		return
	}
	wait := publishRetryMin
	for attempt := 1; ; attempt++ {
		err := p.publish(msg)
		if err == nil {
			return
		}
		if attempt == 1 || attempt%100 == 0 {
			p.log.Warn("conversation event not published; retrying", "stream", e.Stream, "seq", e.Seq, "id", e.Event.ID(), "attempt", attempt, "err", err)
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			// Closing: one last try, then it is lost with the node's
			// connection, and said so.
			if err := p.publish(msg); err != nil {
				p.log.Warn("conversation event not published at shutdown", "stream", e.Stream, "seq", e.Seq, "err", err)
			}
			return
		}
		wait = min(2*wait, publishRetryMax)
	}
}

// message encodes e for NATS, or false when e is no conversation's event
// (a conversation.* type written to another stream).
func (p *Publisher) message(e eventlog.Entry) (*nats.Msg, bool) {
	key, ok := conversation.KeyOf(e.Stream)
	if !ok {
		return nil, false
	}
	msg, err := codec.Encode(p.subjects.Emit(key, e.Event.Type()), &e.Event, codec.Binary)
	if err != nil {
		p.log.Error("conversation event not encodable; not published", "stream", e.Stream, "seq", e.Seq, "err", err)
		return nil, false
	}
	msg.Header[HeaderSeq] = []string{strconv.FormatUint(e.Seq, 10)}
	msg.Header[HeaderStream] = []string{e.Stream}
	// The node's emit stream stores it once, as it does an agent's emit.
	msg.Header[dispatch.HeaderMsgID] = []string{dispatch.MsgID(&e.Event)}
	return msg, true
}
