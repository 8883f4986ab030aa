package natsbus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/bus"
)

// ErrNoNode matches (errors.Is) the error of a request that nobody
// subscribes to; the error itself is an *bus.Error of type unavailable that
// says why.
var ErrNoNode = errors.New("no jido-bus node answers")

// noNodeError is an unavailable *bus.Error that also matches ErrNoNode.
type noNodeError struct{ err *bus.Error }

func (e noNodeError) Error() string        { return e.err.Error() }
func (e noNodeError) Unwrap() error        { return e.err }
func (e noNodeError) Is(target error) bool { return target == ErrNoNode }

// DefaultRequestTimeout bounds a control-plane request when the
// Requester's Timeout is zero.
const DefaultRequestTimeout = 10 * time.Second

// Requester sends control-plane requests (JSON on <prefix>.api.<area>.<verb>)
// to a running node and decodes the replies. It is the one request client
// of the CLI, `top` and the API packages' Clients, so every caller gets the
// same errors, each an *bus.Error:
//
//   - a failed reply: the reply's own error (not_found, invalid_request, …);
//   - nobody subscribed to the subject: unavailable, saying whether a node
//     answers under another prefix or under this one without serving the
//     subject;
//   - the server refused the publish or the reply inbox (a NATS permissions
//     violation, seen when Denials is installed on the connection):
//     forbidden, at once rather than after the timeout;
//   - no answer within Timeout: unavailable, naming the subject and the
//     timeout.
//
// The zero Timeout means DefaultRequestTimeout. A Requester is a value; it
// is safe for concurrent use as its connection is.
type Requester struct {
	NC       *nats.Conn
	Subjects bus.Subjects
	Timeout  time.Duration
	// Denials, when it is the connection's ErrorHandler (see
	// Denials.Handle), turns a permissions violation into an immediate
	// forbidden error. Nil: a refused request ends with the timeout.
	Denials *Denials
}

// Call sends req (JSON-encoded; nil sends an empty body) to
// <prefix>.api.<area>.<verb> and decodes an ok reply into result (nil:
// the reply is not decoded).
func (r Requester) Call(ctx context.Context, area, verb string, req, result any) error {
	return r.Do(ctx, r.Subjects.API(area, verb), req, result)
}

// Do is Call for any subject (for example Subjects.Ping()).
func (r Requester) Do(ctx context.Context, subject string, req, result any) error {
	reply, err := r.Request(ctx, subject, req)
	if err != nil || result == nil {
		return err
	}
	if err := json.Unmarshal(reply, result); err != nil {
		return bus.Errorf(bus.ReasonInternal, "the reply on %s does not decode: %v (reply %.200s)", subject, err, reply)
	}
	return nil
}

// Request sends req to subject and returns the ok reply as it came.
func (r Requester) Request(ctx context.Context, subject string, req any) (json.RawMessage, error) {
	var data []byte
	if req != nil {
		var err error
		if data, err = json.Marshal(req); err != nil {
			return nil, fmt.Errorf("encode the request to %s: %w", subject, err)
		}
	}
	switch {
	case r.NC.IsClosed() && isAuthError(r.NC.LastError()):
		// Closed because the server refused the credentials (changed or
		// removed since the connect): no node will answer this
		// connection, and the fix is the credentials. A connection still
		// reconnecting is not: a follower's keeps trying, and the
		// credentials may be accepted again.
		return nil, r.authFailed()
	case r.NC.IsClosed():
		return nil, bus.Errorf(bus.ReasonUnavailable, "the connection to %s is closed: is a jido-bus node running there?", r.url())
	case !r.NC.IsConnected():
		return nil, bus.Errorf(bus.ReasonUnavailable, "the connection to %s is down, reconnecting: is the node still running?", r.url())
	}
	timeout := r.timeout()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	var denied <-chan error
	if r.Denials != nil {
		var stop func()
		denied, stop = r.Denials.watch(subject)
		defer stop()
	}
	type answer struct {
		msg *nats.Msg
		err error
	}
	done := make(chan answer, 1)
	go func() {
		msg, err := r.NC.RequestWithContext(ctx, subject, data)
		done <- answer{msg, err}
	}()
	var a answer
	select {
	case a = <-done:
	case err := <-denied:
		cancel()
		<-done
		return nil, err
	}
	switch {
	case errors.Is(a.err, nats.ErrNoResponders):
		return nil, r.noResponders(ctx, subject)
	case errors.Is(a.err, context.DeadlineExceeded):
		// Our own deadline, or the caller's: either way nobody answered
		// in time. A denial that raced the deadline is the better answer.
		select {
		case err := <-denied:
			return nil, err
		default:
		}
		return nil, bus.Errorf(bus.ReasonUnavailable, "no answer on %s at %s within %s (the request timeout, --timeout on the CLI): the node is overloaded or stuck; check its log, or raise the timeout", subject, r.url(), timeout)
	case errors.Is(a.err, nats.ErrConnectionClosed) && isAuthError(r.NC.LastError()):
		// Closed under the request, the credentials refused on the way.
		return nil, r.authFailed()
	case a.err != nil:
		return nil, fmt.Errorf("request on %s at %s: %w", subject, r.url(), a.err)
	}
	var st bus.ReplyStatus
	if err := json.Unmarshal(a.msg.Data, &st); err != nil {
		return nil, bus.Errorf(bus.ReasonInternal, "the reply on %s is not a jido-bus reply: %v (reply %.200q)", subject, err, a.msg.Data)
	}
	if err := st.Err(); err != nil {
		return nil, err
	}
	return a.msg.Data, nil
}

// authFailed is the forbidden error of a connection the server closed,
// or keeps refusing to reconnect, because of its credentials.
func (r Requester) authFailed() error {
	return bus.Errorf(bus.ReasonForbidden, "authorization failed at %s: the server refused this connection's credentials (%v); check the user, password, token, credentials or nkey it connects with", r.url(), r.NC.LastError())
}

// isAuthError reports whether err is the server refusing the
// connection's credentials.
func isAuthError(err error) bool {
	return err != nil && (errors.Is(err, nats.ErrAuthorization) || errors.Is(err, nats.ErrAuthExpired) ||
		errors.Is(err, nats.ErrAuthRevoked) || errors.Is(err, nats.ErrAccountAuthExpired))
}

func (r Requester) timeout() time.Duration {
	if r.Timeout <= 0 {
		return DefaultRequestTimeout
	}
	return r.Timeout
}

// url names the server the connection is (or was last) connected to.
func (r Requester) url() string {
	if u := r.NC.ConnectedUrlRedacted(); u != "" {
		return u
	}
	if s := r.NC.Servers(); len(s) > 0 {
		return s[0]
	}
	return r.NC.Opts.Url
}

// prefix is the subject prefix r's Subjects build under.
func (r Requester) prefix() string { return r.Subjects.Name() }

// noResponders explains why nobody subscribes to subject: a node under the
// default prefix while another was asked for, a node under this prefix
// that does not serve subject, or no node at all. The probes are pings with
// a short timeout; their own failures only make the answer less precise.
func (r Requester) noResponders(ctx context.Context, subject string) error {
	return noNodeError{r.whyNoResponders(ctx, subject)}
}

func (r Requester) whyNoResponders(ctx context.Context, subject string) *bus.Error {
	prefix := r.prefix()
	probe := func(p string) bool {
		s, err := bus.NewSubjects(p)
		if err != nil {
			return false
		}
		pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), min(r.timeout(), time.Second))
		defer cancel()
		_, err = r.NC.RequestWithContext(pctx, s.Ping(), nil)
		return err == nil
	}
	if subject != r.Subjects.Ping() && probe(prefix) {
		return bus.Errorf(bus.ReasonUnavailable, "the jido-bus node at %s answers under --prefix %s but nothing serves %s: is it an older version of jido-bus?", r.url(), prefix, subject)
	}
	if prefix != bus.DefaultPrefix && probe(bus.DefaultPrefix) {
		return bus.Errorf(bus.ReasonUnavailable, "no jido-bus node answers on %s at %s, but one answers under --prefix %s: is --prefix %s a mistake?", subject, r.url(), bus.DefaultPrefix, prefix)
	}
	return bus.Errorf(bus.ReasonUnavailable, "no jido-bus node answers on %s at %s: is one running, and does it serve --prefix %s?", subject, r.url(), prefix)
}
