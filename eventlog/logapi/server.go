package logapi

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/nats-io/nats.go"
)

// Server answers <prefix>.api.log.<verb> requests from the Log. The short
// operations are handled one at a time, in arrival order, on the NATS
// client's goroutine for the subscription. A verify reads the whole log,
// which may take minutes, so it runs on a goroutine of its own (on a
// snapshot of the log: appends and reads go on meanwhile), at most one at
// a time: a verify asked for while one runs is refused with
// queue_overflow rather than queued. Close cancels a running verify and
// waits for it.
type Server struct {
	sub   *nats.Subscription
	local Local
	ctx   context.Context
	stop  context.CancelFunc
	once  sync.Once

	verifying atomic.Bool    // a verify runs
	bg        sync.WaitGroup // the running verify
}

// Serve subscribes to every log verb under subjects on nc.
func Serve(nc *nats.Conn, log *eventlog.Log, subjects bus.Subjects) (*Server, error) {
	return ServeLocal(nc, Local{Log: log}, subjects)
}

// ServeLocal is Serve with the Local (its Guard, its progress callback)
// given.
func ServeLocal(nc *nats.Conn, local Local, subjects bus.Subjects) (*Server, error) {
	ctx, stop := context.WithCancel(context.Background())
	s := &Server{local: local, ctx: ctx, stop: stop}
	prefix := subjects.API("log", "")
	sub, err := nc.Subscribe(subjects.API("log", "*"), func(m *nats.Msg) {
		s.handle(strings.TrimPrefix(m.Subject, prefix), m)
	})
	if err != nil {
		stop()
		return nil, fmt.Errorf("subscribe %s: %w", subjects.API("log", "*"), err)
	}
	s.sub = sub
	// Once Serve returns, the server knows the subscription: a request
	// sent after that is answered, not refused with "no responders".
	if err := nc.Flush(); err != nil {
		_ = sub.Unsubscribe()
		stop()
		return nil, fmt.Errorf("subscribe %s: server did not confirm: %w", subjects.API("log", "*"), err)
	}
	return s, nil
}

// Close unsubscribes and cancels a request being handled. It does not
// close the Log or the connection.
func (s *Server) Close() error {
	var err error
	s.once.Do(func() {
		s.stop()
		err = s.sub.Unsubscribe()
		s.bg.Wait()
	})
	return err
}

func (s *Server) handle(verb string, m *nats.Msg) {
	if m.Reply == "" {
		return // a request without a reply subject cannot be answered
	}
	var (
		result any
		err    error
	)
	switch verb {
	case VerbStreams:
		result, err = call(s.ctx, m.Data, s.local.Streams)
	case VerbShow, VerbTail, VerbExport:
		result, err = call(s.ctx, m.Data, s.local.Read)
	case VerbImport:
		result, err = call(s.ctx, m.Data, s.local.Import)
	case VerbVerify:
		if !s.verifying.CompareAndSwap(false, true) {
			err = bus.Errorf(bus.ReasonQueueOverflow, "a verify of the log is already running; retry when it has finished")
			break
		}
		s.bg.Go(func() {
			defer s.verifying.Store(false)
			result, err := call(s.ctx, m.Data, s.local.Verify)
			respond(m, result, err)
		})
		return
	case VerbTruncate:
		result, err = call(s.ctx, m.Data, s.local.Truncate)
	default:
		err = bus.Errorf(bus.ReasonInvalidSubject, "unknown log verb %q; want streams, show, tail, export, import, verify or truncate", verb)
	}
	respond(m, result, err)
}

// respond answers m with result, or with err as a typed error reply.
func respond(m *nats.Msg, result any, err error) {
	var body []byte
	if err == nil {
		body, err = bus.OKReply(result)
	}
	if err != nil {
		body = bus.ErrorReply(asBusError(err))
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
