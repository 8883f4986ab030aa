package logapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/nats-io/nats.go"
)

// ErrNoServer means no server answered on the log subjects.
var ErrNoServer = errors.New("no jido-bus server answers on NATS")

// Client calls a running server's log API. It is safe for concurrent use.
type Client struct {
	NC       *nats.Conn
	Subjects bus.Subjects
	// Timeout bounds each request unless ctx ends sooner. Zero means 10s;
	// Verify scans the whole log and uses VerifyTimeout instead.
	Timeout time.Duration
	// VerifyTimeout bounds a Verify. Zero means 10 minutes.
	VerifyTimeout time.Duration
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

// call sends req to verb and decodes the reply into result. A failed reply
// comes back as its *bus.Error.
func (c Client) call(ctx context.Context, verb string, timeout time.Duration, req, result any) error {
	if timeout == 0 {
		timeout = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	data, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("log %s: encode request: %w", verb, err)
	}
	subject := c.Subjects.API("log", verb)
	msg, err := c.NC.RequestWithContext(ctx, subject, data)
	if errors.Is(err, nats.ErrNoResponders) {
		return fmt.Errorf("log %s: %w (nothing subscribes to %s)", verb, ErrNoServer, subject)
	}
	if err != nil {
		return fmt.Errorf("log %s via %s: %w", verb, subject, err)
	}
	var status bus.ReplyStatus
	if err := json.Unmarshal(msg.Data, &status); err != nil {
		return fmt.Errorf("log %s: reply is not JSON: %w", verb, err)
	}
	if err := status.Err(); err != nil {
		return err
	}
	if err := json.Unmarshal(msg.Data, result); err != nil {
		return fmt.Errorf("log %s: decode reply: %w", verb, err)
	}
	return nil
}
