package projectionapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/projections"
	"github.com/nats-io/nats.go"
)

// ErrNoServer means no server answered on the projection subjects.
var ErrNoServer = errors.New("no jido-bus server answers on NATS")

// Client calls a running server's projection and conv areas. It is safe for
// concurrent use.
type Client struct {
	NC       *nats.Conn
	Subjects bus.Subjects
	// Timeout bounds each request unless ctx ends sooner. Zero means 10s.
	Timeout time.Duration
}

// List returns every projection's status.
func (c Client) List(ctx context.Context, req ListRequest) (ListReply, error) {
	var r ListReply
	return r, c.call(ctx, AreaProjection, VerbList, req, &r)
}

// Get returns one key's state.
func (c Client) Get(ctx context.Context, req GetRequest) (projections.State, error) {
	var r projections.State
	return r, c.call(ctx, AreaProjection, VerbGet, req, &r)
}

// Rebuild requests a rebuild.
func (c Client) Rebuild(ctx context.Context, req RebuildRequest) (RebuildReply, error) {
	var r RebuildReply
	return r, c.call(ctx, AreaProjection, VerbRebuild, req, &r)
}

// ConvList lists conversations.
func (c Client) ConvList(ctx context.Context, req ConvListRequest) (ConvListReply, error) {
	var r ConvListReply
	return r, c.call(ctx, AreaConv, VerbList, req, &r)
}

// ConvShow returns one read model of a conversation.
func (c Client) ConvShow(ctx context.Context, req ConvShowRequest) (ConvShowReply, error) {
	var r ConvShowReply
	return r, c.call(ctx, AreaConv, VerbShow, req, &r)
}

// ConvFork forks a conversation.
func (c Client) ConvFork(ctx context.Context, req ConvForkRequest) (ConvForkReply, error) {
	var r ConvForkReply
	return r, c.call(ctx, AreaConv, VerbFork, req, &r)
}

// call sends req to area.verb and decodes the reply into result. A failed
// reply comes back as its *bus.Error.
func (c Client) call(ctx context.Context, area, verb string, req, result any) error {
	timeout := c.Timeout
	if timeout == 0 {
		timeout = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	data, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("%s %s: encode request: %w", area, verb, err)
	}
	subject := c.Subjects.API(area, verb)
	msg, err := c.NC.RequestWithContext(ctx, subject, data)
	if errors.Is(err, nats.ErrNoResponders) {
		return fmt.Errorf("%s %s: %w (nothing subscribes to %s)", area, verb, ErrNoServer, subject)
	}
	if err != nil {
		return fmt.Errorf("%s %s via %s: %w", area, verb, subject, err)
	}
	var status bus.ReplyStatus
	if err := json.Unmarshal(msg.Data, &status); err != nil {
		return fmt.Errorf("%s %s: reply is not JSON: %w", area, verb, err)
	}
	if err := status.Err(); err != nil {
		return err
	}
	if err := json.Unmarshal(msg.Data, result); err != nil {
		return fmt.Errorf("%s %s: decode reply: %w", area, verb, err)
	}
	return nil
}
