package projectionapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/nats-io/nats.go"
)

// Server answers <prefix>.api.projection.<verb> and <prefix>.api.conv.<verb>
// requests through a Local. Requests are handled one at a time per verb,
// in arrival order, on the NATS client's goroutine for the subscription:
// every verb is a few reads (a fold with --at reads one conversation's
// stream). Close stops it.
type Server struct {
	subs  []*nats.Subscription
	local Local
	ctx   context.Context
	stop  context.CancelFunc
	once  sync.Once
}

// Serve subscribes to each verb of both areas under subjects on nc. It
// subscribes verb by verb, not to <area>.*, so that other verbs of the conv
// area (conv.send and conv.follow, served by the agent runtime) can be
// answered by their own subscriber without a second, failing reply.
func Serve(nc *nats.Conn, local Local, subjects bus.Subjects) (*Server, error) {
	ctx, stop := context.WithCancel(context.Background())
	s := &Server{local: local, ctx: ctx, stop: stop}
	verbs := map[string][]string{
		AreaProjection: {VerbList, VerbGet, VerbRebuild},
		AreaConv:       {VerbList, VerbShow, VerbFork},
	}
	for _, area := range []string{AreaProjection, AreaConv} {
		for _, verb := range verbs[area] {
			subject := subjects.API(area, verb)
			sub, err := nc.Subscribe(subject, func(m *nats.Msg) { s.handle(area, verb, m) })
			if err != nil {
				_ = s.Close()
				return nil, fmt.Errorf("subscribe %s: %w", subject, err)
			}
			s.subs = append(s.subs, sub)
		}
	}
	if err := nc.Flush(); err != nil {
		_ = s.Close()
		return nil, fmt.Errorf("confirm subscriptions: %w", err)
	}
	return s, nil
}

// Close unsubscribes and cancels a request being handled. It closes
// neither the Runner, the Log nor the connection.
func (s *Server) Close() error {
	var err error
	s.once.Do(func() {
		s.stop()
		for _, sub := range s.subs {
			err = errors.Join(err, sub.Unsubscribe())
		}
	})
	return err
}

func (s *Server) handle(area, verb string, m *nats.Msg) {
	if m.Reply == "" {
		return // a request without a reply subject cannot be answered
	}
	var (
		result any
		err    error
	)
	switch area + "." + verb { // every case is subscribed in Serve
	case AreaProjection + "." + VerbList:
		result, err = call(s.ctx, m.Data, s.local.List)
	case AreaProjection + "." + VerbGet:
		result, err = call(s.ctx, m.Data, s.local.Get)
	case AreaProjection + "." + VerbRebuild:
		result, err = call(s.ctx, m.Data, s.local.Rebuild)
	case AreaConv + "." + VerbList:
		result, err = call(s.ctx, m.Data, s.local.ConvList)
	case AreaConv + "." + VerbShow:
		result, err = call(s.ctx, m.Data, s.local.ConvShow)
	case AreaConv + "." + VerbFork:
		result, err = call(s.ctx, m.Data, s.local.ConvFork)
	}
	var body []byte
	if err == nil {
		body, err = bus.OKReply(result)
	}
	if err != nil {
		body = bus.ErrorReply(err)
	}
	_ = m.Respond(body) // a requester that went away needs no answer
}

// call decodes a request of type Req and runs op.
func call[Req, Rep any](ctx context.Context, data []byte, op func(context.Context, Req) (Rep, error)) (any, error) {
	var req Req
	if len(data) > 0 {
		if err := json.Unmarshal(data, &req); err != nil {
			return nil, bus.Errorf(bus.ReasonMalformed, "request is not valid JSON for this verb: %v", err)
		}
	}
	return op(ctx, req)
}
