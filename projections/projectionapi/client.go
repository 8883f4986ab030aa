package projectionapi

import (
	"context"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/natsbus"
	"github.com/jido-bus/jido-bus/projections"
)

// ErrNoServer matches (errors.Is) the error of a request no server
// answers; the error is an *bus.Error of type unavailable saying why.
var ErrNoServer = natsbus.ErrNoNode

// Client calls a running server's projection area through
// natsbus.Requester, so its errors are the Requester's. It is safe for
// concurrent use.
type Client struct {
	NC       *nats.Conn
	Subjects bus.Subjects
	// Timeout bounds each request unless ctx ends sooner. Zero means 10s.
	Timeout time.Duration
	// Denials, when installed as NC's error handler, makes a request the
	// user may not send fail at once as forbidden (see natsbus.Denials).
	Denials *natsbus.Denials
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

func (c Client) call(ctx context.Context, area, verb string, req, result any) error {
	r := natsbus.Requester{NC: c.NC, Subjects: c.Subjects, Timeout: c.Timeout, Denials: c.Denials}
	return r.Call(ctx, area, verb, req, result)
}
