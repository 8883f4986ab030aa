package natsbus

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/codec"
)

// DefaultQueueGroup is the queue group control-plane subscriptions join, so
// that in a cluster each request is served by one node.
const DefaultQueueGroup = "jido-api"

// Options configure a Bus. The zero value uses the default prefix, the
// default limits and discards logs.
type Options struct {
	Subjects bus.Subjects
	Limits   bus.Limits
	Logger   *slog.Logger
	// OnDeadLetter, when set, receives every dead letter after it has been
	// published (the node appends it to the log stream "dlq"). It runs on
	// the goroutine that refused the input and must not block for long.
	OnDeadLetter func(DeadLetter)
	// OnRefused, when set, is told the reason of every input the Bus
	// itself refuses (see refuse), once each, before its dead letter is
	// filed. It runs on the refusing goroutine and must not block.
	OnRefused func(reason string)
	// QueueGroup for control-plane subscriptions; empty means
	// DefaultQueueGroup.
	QueueGroup string
	// Now is the clock for dead-letter times; nil means time.Now.
	Now func() time.Time
	// InboxReplies accepts only inboxes (subjects starting with _INBOX:
	// "_INBOX.…", "_INBOX_<user>.…") as reply subjects: set it when the
	// server enforces roles, whose users may only read their own inbox, so
	// that no requester makes the bus publish where it could not. Without
	// it only subjects under the prefix and $-subjects are refused (see
	// checkReply).
	InboxReplies bool
	// DigestKey keys the digests that replace credentials in dead letters
	// (see DeadLetter): the node keeps one in its data dir so that the
	// same token has the same digest across restarts. Nil means a random
	// key, never none.
	DigestKey []byte
	// Partitions, when set, is cluster mode: input that belongs to a
	// partition this node does not serve goes to the node that does
	// (partitioned.go), and signals to agents are a queue subscription,
	// taken by one node of the cluster each.
	Partitions *Partitioner
}

// Bus is jido-bus's side of a NATS connection. It does not own the
// connection: the caller closes it (after Bus.Shutdown). A Bus is safe for
// concurrent use.
type Bus struct {
	nc      *nats.Conn
	opts    Options
	log     *slog.Logger
	decoder codec.Decoder
	ctx     context.Context
	cancel  context.CancelFunc

	mu   sync.RWMutex
	subs []*nats.Subscription
	// draining is set once Shutdown has begun: nothing new subscribes.
	draining bool
	// inflight counts the messages being handled (see enter), so Shutdown can
	// wait for them: unsubscribing does not wait for a callback that is
	// already running.
	inflight sync.WaitGroup

	metrics counters
	// jsConsumers are the JetStream consumers refused for delivering into
	// the node's subjects (refuseStreamDelivery).
	jsConsumers jsConsumers
	parts       partitions
}

type counters struct {
	received    atomic.Uint64
	rejected    atomic.Uint64
	deadLetters atomic.Uint64
	apiRequests atomic.Uint64
}

// Stats are running totals since the Bus was made.
type Stats struct {
	Received    uint64 `json:"received"`     // signals decoded and handed to a handler
	Rejected    uint64 `json:"rejected"`     // inputs refused (each also a dead letter)
	DeadLetters uint64 `json:"dead_letters"` // dead letters published
	APIRequests uint64 `json:"api_requests"` // control-plane requests served
}

// New returns a Bus on nc.
func New(nc *nats.Conn, opts Options) *Bus {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if opts.QueueGroup == "" {
		opts.QueueGroup = DefaultQueueGroup
	}
	if len(opts.DigestKey) == 0 {
		opts.DigestKey = NewDigestKey()
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Bus{
		nc:      nc,
		opts:    opts,
		log:     log,
		decoder: codec.Decoder{Limits: opts.Limits},
		ctx:     ctx,
		cancel:  cancel,
	}
}

// Conn returns the NATS connection the Bus uses.
func (b *Bus) Conn() *nats.Conn { return b.nc }

// Subjects returns the subject scheme the Bus uses.
func (b *Bus) Subjects() bus.Subjects { return b.opts.Subjects }

// Stats returns the running totals.
func (b *Bus) Stats() Stats {
	return Stats{
		Received:    b.metrics.received.Load(),
		Rejected:    b.metrics.rejected.Load(),
		DeadLetters: b.metrics.deadLetters.Load(),
		APIRequests: b.metrics.apiRequests.Load(),
	}
}

func (b *Bus) now() time.Time {
	if b.opts.Now != nil {
		return b.opts.Now()
	}
	return time.Now()
}

// Publish sends s on subject in binary mode.
func (b *Bus) Publish(subject string, s *bus.Signal) error {
	msg, err := codec.Encode(subject, s, codec.Binary)
	if err != nil {
		return err
	}
	if err := b.nc.PublishMsg(msg); err != nil {
		return fmt.Errorf("publish %s to %s: %w", s.ID(), subject, err)
	}
	return nil
}

// Shutdown stops taking input without losing what was taken: every
// subscription is drained — the server sends it nothing more, and the
// messages it has already sent (in the client's buffers) are handled as
// usual — until ctx ends; what is still buffered then is dropped by the
// client, which the returned error reports. Then the context the handlers
// received is cancelled, and Shutdown returns once the messages already
// handed to a handler are handled. A message that arrives after that is
// answered unavailable and dead-lettered.
func (b *Bus) Shutdown(ctx context.Context) error {
	b.mu.Lock()
	subs := b.subs
	b.subs = nil
	b.draining = true
	b.mu.Unlock()
	b.stopPartitions()
	var errs []error
	closed := make([]<-chan nats.SubStatus, len(subs))
	for i, s := range subs {
		closed[i] = s.StatusChanged(nats.SubscriptionClosed)
		if err := s.Drain(); err != nil && !errors.Is(err, nats.ErrConnectionClosed) && !errors.Is(err, nats.ErrBadSubscription) {
			errs = append(errs, fmt.Errorf("drain %s: %w", s.Subject, err))
		}
	}
	for i, s := range subs {
		select {
		case <-closed[i]:
		case <-ctx.Done():
			if n, _, err := s.Pending(); err == nil && n > 0 {
				errs = append(errs, fmt.Errorf("drain %s: %d messages not handled: %w", s.Subject, n, ctx.Err()))
			}
			if err := s.Unsubscribe(); err != nil && !errors.Is(err, nats.ErrConnectionClosed) && !errors.Is(err, nats.ErrBadSubscription) {
				errs = append(errs, fmt.Errorf("unsubscribe %s: %w", s.Subject, err))
			}
		}
	}
	b.mu.Lock()
	b.cancel()
	b.mu.Unlock()
	b.inflight.Wait()
	return errors.Join(errs...)
}

// enter admits one message for handling, to be ended with
// b.inflight.Done; once Shutdown has begun it refuses with an unavailable
// error for the caller to answer. (Taking the lock orders every Add before
// Shutdown's Wait, as sync.WaitGroup requires.)
func (b *Bus) enter() error {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.ctx.Err() != nil {
		return errClosing
	}
	b.inflight.Add(1)
	return nil
}

var errClosing = bus.Errorf(bus.ReasonUnavailable, "the node is shutting down; retry after it restarts or against another node")

func (b *Bus) track(sub *nats.Subscription) error {
	// A subscription whose pending buffer overflows drops messages in the
	// client; make the limits generous and report overflows loudly
	// (Options.Logger) rather than let them pass unseen.
	if err := sub.SetPendingLimits(1<<20, 1<<30); err != nil {
		return fmt.Errorf("set pending limits on %s: %w", sub.Subject, err)
	}
	b.mu.Lock()
	if b.draining || b.ctx.Err() != nil {
		b.mu.Unlock()
		_ = sub.Unsubscribe()
		return errors.New("natsbus: bus is closed")
	}
	b.subs = append(b.subs, sub)
	b.mu.Unlock()
	// Once Handle* returns, the server knows the subscription: a message
	// published after that reaches it.
	if err := b.nc.FlushTimeout(flushTimeout); err != nil {
		return fmt.Errorf("subscribe %s: server did not confirm: %w", sub.Subject, err)
	}
	return nil
}

// flushTimeout bounds the wait for the server to confirm a subscription.
const flushTimeout = 10 * time.Second

// reply answers a request; a failure to answer is logged, since the
// requester will see a timeout and there is no one else to tell.
func (b *Bus) reply(msg *nats.Msg, body []byte) {
	if msg.Reply == "" {
		return
	}
	if err := b.checkReply(msg); err != nil {
		// Refused on arrival (checkReply); never published on.
		b.log.Error("reply", "subject", msg.Subject, "err", err)
		return
	}
	if err := msg.Respond(body); err != nil {
		b.log.Error("reply", "subject", msg.Subject, "reply", msg.Reply, "err", err)
	}
}
