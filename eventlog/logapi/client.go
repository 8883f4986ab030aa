package logapi

import (
	"context"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/natsbus"
	"github.com/jido-bus/jido-bus/eventlog"
)

// ErrNoServer matches (errors.Is) the error of a request no server
// answers; the error is an *bus.Error of type unavailable saying why.
var ErrNoServer = natsbus.ErrNoNode

// Client calls a running server's log API through natsbus.Requester, so
// its errors are the Requester's. It is safe for concurrent use.
type Client struct {
	NC       *nats.Conn
	Subjects bus.Subjects
	// Timeout bounds each request unless ctx ends sooner. Zero means 10s;
	// Verify scans the whole log and uses VerifyTimeout instead.
	Timeout time.Duration
	// VerifyTimeout bounds a Verify. Zero means 10 minutes.
	VerifyTimeout time.Duration
	// Denials, when installed as NC's error handler, makes a request the
	// user may not send fail at once as forbidden (see natsbus.Denials).
	Denials *natsbus.Denials
}

// Streams lists the streams.
func (c Client) Streams(ctx context.Context, req StreamsRequest) (StreamsReply, error) {
	var r StreamsReply
	return r, c.call(ctx, VerbStreams, c.Timeout, req, &r)
}

// Read reads one page.
func (c Client) Read(ctx context.Context, req ReadRequest) (ReadReply, error) {
	var r ReadReply
	return r, c.call(ctx, VerbShow, c.Timeout, req, &r)
}

// Import appends one chunk of events.
func (c Client) Import(ctx context.Context, req ImportRequest) (ImportReply, error) {
	var r ImportReply
	return r, c.call(ctx, VerbImport, c.Timeout, req, &r)
}

// Verify checks the whole log on the server.
func (c Client) Verify(ctx context.Context, req VerifyRequest) (eventlog.VerifyReport, error) {
	var r eventlog.VerifyReport
	timeout := c.VerifyTimeout
	if timeout == 0 {
		timeout = 10 * time.Minute
	}
	return r, c.call(ctx, VerbVerify, timeout, req, &r)
}

// Truncate removes a stream's entries below req.Before.
func (c Client) Truncate(ctx context.Context, req TruncateRequest) (TruncateReply, error) {
	var r TruncateReply
	return r, c.call(ctx, VerbTruncate, c.Timeout, req, &r)
}

func (c Client) call(ctx context.Context, verb string, timeout time.Duration, req, result any) error {
	r := natsbus.Requester{NC: c.NC, Subjects: c.Subjects, Timeout: timeout, Denials: c.Denials}
	return r.Call(ctx, "log", verb, req, result)
}
