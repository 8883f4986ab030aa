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
// Subjects().API(area, verb). Each request is answered with
// {"ok":true,…} or {"ok":false,"error":…}; a request that cannot be read
// (an *bus.Error of type invalid_request or malformed) or is refused
// (forbidden) is also filed as a dead letter. Requests on one subject are
// served one at a time, in order.
func (b *Bus) HandleAPI(subject string, fn APIFunc) error {
	sub, err := b.nc.QueueSubscribe(subject, b.opts.QueueGroup, func(msg *nats.Msg) {
		if err := b.enter(); err != nil {
			b.reply(msg, bus.ErrorReply(err))
			return
		}
		defer b.inflight.Done()
		b.metrics.apiRequests.Add(1)
		b.serveAPI(msg, subject, fn)
	})
	if err != nil {
		return fmt.Errorf("subscribe %s: %w", subject, err)
	}
	return b.track(sub)
}

// HandleAPIConcurrent is HandleAPI for requests that may wait long (an
// await): each request is served on its own goroutine, at most maxInFlight
// at a time (further ones are answered with queue_overflow). Close waits
// for the requests in flight.
func (b *Bus) HandleAPIConcurrent(subject string, maxInFlight int, fn APIFunc) error {
	sem := make(chan struct{}, maxInFlight)
	sub, err := b.nc.QueueSubscribe(subject, b.opts.QueueGroup, func(msg *nats.Msg) {
		if err := b.enter(); err != nil {
			b.reply(msg, bus.ErrorReply(err))
			return
		}
		b.metrics.apiRequests.Add(1)
		select {
		case sem <- struct{}{}:
		default:
			b.inflight.Done()
			b.reply(msg, bus.ErrorReply(bus.Errorf(bus.ReasonQueueOverflow, "%d %s requests are in flight; retry later", maxInFlight, subject)))
			return
		}
		go func() {
			defer b.inflight.Done()
			defer func() { <-sem }()
			b.serveAPI(msg, subject, fn)
		}()
	})
	if err != nil {
		return fmt.Errorf("subscribe %s: %w", subject, err)
	}
	return b.track(sub)
}

func (b *Bus) serveAPI(msg *nats.Msg, subject string, fn APIFunc) {
	result, err := fn(b.ctx, msg.Data)
	if err != nil {
		switch bus.ErrorType(err) {
		case bus.ReasonInvalidRequest, bus.ReasonMalformed, bus.ReasonForbidden:
			b.reject(msg, err)
		default:
			b.reply(msg, bus.ErrorReply(err))
		}
		return
	}
	body, err := bus.OKReply(result)
	if err != nil {
		b.log.Error("encode API reply", "subject", subject, "err", err)
		body = bus.ErrorReply(err)
	}
	b.reply(msg, body)
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
		return bus.Errorf(bus.ReasonInvalidRequest, "request: %v", err)
	}
	if dec.More() {
		return bus.Errorf(bus.ReasonInvalidRequest, "request has data after the JSON object")
	}
	return nil
}
