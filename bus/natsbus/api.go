package natsbus

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/bus"
)

// APIFunc serves one control-plane request. req is the request body (empty
// when none was sent); the result must encode as a JSON object, or be nil.
type APIFunc func(ctx context.Context, req []byte) (result any, err error)

// HandleAPI serves requests on subject, normally built with
// Subjects().API(area, verb), in the Bus's queue group (of the nodes on
// one prefix, one answers each request). Each request is answered with
// {"ok":true,…} or {"ok":false,"error":…}; a request that is bad input
// (an *bus.Error of a type in refusedReasons: unreadable, breaking a
// grammar) or is not allowed (forbidden) is refused: also filed as a dead
// letter and reported to
// Options.OnRefused; so is a request without a reply subject, which is
// not served (its outcome would reach no one). A reply larger than the
// server's max payload is answered too_large instead. Requests on
// one subject are served one at a time, in order.
func (b *Bus) HandleAPI(subject string, fn APIFunc) error {
	return b.subscribeAPI(subject, fn, nil)
}

// HandleAPIConcurrent is HandleAPI for requests that may take long (an
// await, a verify of the whole log): each request is served on its own
// goroutine, at most maxInFlight at a time (further ones are refused with
// queue_overflow, not queued). Shutdown cancels the context the requests
// in flight received and waits for them; one that then fails is answered
// unavailable (the node went away), whatever its handler returned.
func (b *Bus) HandleAPIConcurrent(subject string, maxInFlight int, fn APIFunc) error {
	if maxInFlight < 1 {
		return fmt.Errorf("natsbus: HandleAPIConcurrent %s: maxInFlight %d, want at least 1", subject, maxInFlight)
	}
	return b.subscribeAPI(subject, fn, make(chan struct{}, maxInFlight))
}

func (b *Bus) subscribeAPI(subject string, fn APIFunc, sem chan struct{}) error {
	h := b.apiHandler(subject, fn, sem)
	b.remember(subject, h, false)
	sub, err := b.nc.QueueSubscribe(subject, b.opts.QueueGroup, h)
	if err != nil {
		return fmt.Errorf("subscribe %s: %w", subject, err)
	}
	return b.track(sub)
}

// apiHandler is the NATS callback of one API subject: serial when sem is
// nil, else each request on a goroutine of its own while sem has room.
func (b *Bus) apiHandler(subject string, fn APIFunc, sem chan struct{}) nats.MsgHandler {
	return func(msg *nats.Msg) {
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
			b.refuse(msg, err)
			return
		}
		b.metrics.apiRequests.Add(1)
		if msg.Reply == "" {
			// Done without a reply subject, a request's outcome — even
			// a truncation's — would reach no one: refuse it instead,
			// and the dead letter is its record.
			defer b.inflight.Done()
			b.refuse(msg, bus.Errorf(bus.ReasonInvalidRequest, "%s is a request and came without a reply subject, so it was not done: send it as a request (nats req, or any client's request call) to be told the outcome", msg.Subject))
			return
		}
		if sem == nil {
			defer b.inflight.Done()
			b.serveAPI(msg, subject, fn)
			return
		}
		select {
		case sem <- struct{}{}:
		default:
			b.inflight.Done()
			b.refuse(msg, bus.Errorf(bus.ReasonQueueOverflow, "%d %s requests are in flight; retry when one has finished", cap(sem), subject))
			return
		}
		go func() {
			defer b.inflight.Done()
			defer func() { <-sem }()
			b.serveAPI(msg, subject, fn)
		}()
	}
}

func (b *Bus) serveAPI(msg *nats.Msg, subject string, fn APIFunc) {
	result, err := fn(b.ctx, msg.Data)
	if err != nil {
		switch typ := bus.ErrorType(err); {
		case refusedReasons[typ]:
			b.refuse(msg, err)
		case typ == bus.ReasonUnavailable:
			b.reply(msg, bus.ErrorReply(err))
		default:
			if b.ctx.Err() != nil {
				// Shutdown cancelled the request's context: whatever the
				// handler made of that (an await's timeout), the truth
				// for the requester is that the node went away.
				err = bus.Errorf(bus.ReasonUnavailable, "the node shut down before the request on %s finished (%s): retry after it restarts or against another node", subject, bus.AsError(err).Message)
			}
			b.reply(msg, bus.ErrorReply(err))
		}
		return
	}
	body, err := bus.OKReply(result)
	if err != nil {
		b.log.Error("encode API reply", "subject", subject, "err", err)
		body = bus.ErrorReply(err)
	}
	if max := b.nc.MaxPayload(); max > 0 && int64(len(body)) > max {
		// NATS would refuse to send it, leaving the requester to its
		// timeout: say why instead.
		b.log.Error("API reply too large", "subject", subject, "bytes", len(body), "max_payload", max)
		body = bus.ErrorReply(bus.Errorf(bus.ReasonTooLarge, "the reply on %s is %d bytes, over the NATS server's max payload of %d: ask for less (a smaller limit, a narrower prefix or filter) or raise the server's max_payload", subject, len(body), max))
	}
	b.reply(msg, body)
}

// refusedReasons are the error types of a request that is bad input —
// unreadable, breaking a grammar (an agent id, a pattern, a type, a
// stream name), or not
// allowed — so refused: answered, dead-lettered and counted. Other errors
// (not_found, timeout, …) answer a readable request about the world.
// too_large is not one: the runtime files a signal the log refuses as too
// large itself.
var refusedReasons = map[string]bool{
	bus.ReasonInvalidRequest: true, bus.ReasonMalformed: true, bus.ReasonForbidden: true,
	bus.ReasonInvalidAgentID: true, bus.ReasonInvalidPattern: true, bus.ReasonInvalidType: true,
	bus.ReasonInvalidStream:  true,
	bus.ReasonInvalidSubject: true, bus.ReasonInvalidAttribute: true, bus.ReasonMissingAttribute: true,
	bus.ReasonInvalidSpecVersion: true, bus.ReasonTypeMismatch: true,
}

// Typed adapts op, which takes its request decoded, to an APIFunc: the
// body is decoded into a Req with DecodeRequest (unknown fields refused,
// an empty body leaves the zero Req) and op's result is the reply.
func Typed[Req, Rep any](op func(context.Context, Req) (Rep, error)) APIFunc {
	return func(ctx context.Context, data []byte) (any, error) {
		var req Req
		if err := DecodeRequest(data, &req); err != nil {
			return nil, err
		}
		rep, err := op(ctx, req)
		if err != nil {
			return nil, err
		}
		return rep, nil
	}
}

// DecodeRequest decodes a JSON request body into v, refusing unknown
// fields; an empty body leaves v as it is. The error is an *bus.Error of
// type invalid_request that says what is wrong.
func DecodeRequest(req []byte, v any) error {
	if len(req) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(req))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var syn *json.SyntaxError
		if errors.As(err, &syn) {
			return bus.Errorf(bus.ReasonInvalidRequest, "request is not valid JSON: %v", err)
		}
		// A field's own decoder (a dispatch config, an option) says what
		// is wrong as an *bus.Error: keep its reason, and do not repeat
		// the reason word inside the message.
		var be *bus.Error
		if errors.As(err, &be) {
			return bus.Errorf(be.Type, "request: %s", be.Message)
		}
		return bus.Errorf(bus.ReasonInvalidRequest, "request: %v", err)
	}
	if dec.More() {
		return bus.Errorf(bus.ReasonInvalidRequest, "request has data after the JSON object")
	}
	return nil
}

// Subscriptions lists the subjects the Bus serves (API verbs and signal
// kinds), in the order they were subscribed: what a reference of the
// control plane must name.
func (b *Bus) Subscriptions() []string {
	b.mu.RLock()
	defer b.mu.RUnlock()
	subjects := make([]string, 0, len(b.subs))
	for _, sub := range b.subs {
		subjects = append(subjects, sub.Subject)
	}
	return subjects
}
