package convapi

import (
	"context"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/natsbus"
)

// Client calls a running node's conv area through natsbus.Requester, so
// its errors are the Requester's. It is safe for concurrent use.
type Client struct {
	NC       *nats.Conn
	Subjects bus.Subjects
	// Timeout bounds each request unless ctx ends sooner. Zero means 10s.
	Timeout time.Duration
	// Denials, when installed as NC's error handler, makes a request the
	// user may not send fail at once as forbidden (see natsbus.Denials).
	Denials *natsbus.Denials
}

// Start starts a conversation in a project.
func (c Client) Start(ctx context.Context, req StartRequest) (Info, error) {
	var r Info
	return r, c.call(ctx, VerbStart, req, &r)
}

// Stop stops a conversation of a project.
func (c Client) Stop(ctx context.Context, req StopRequest) (StopReply, error) {
	var r StopReply
	return r, c.call(ctx, VerbStop, req, &r)
}

// List lists conversations, a page at a time.
func (c Client) List(ctx context.Context, req ListRequest) (ListReply, error) {
	var r ListReply
	return r, c.call(ctx, VerbList, req, &r)
}

// Show returns one read model of a conversation.
func (c Client) Show(ctx context.Context, req ShowRequest) (ShowReply, error) {
	var r ShowReply
	return r, c.call(ctx, VerbShow, req, &r)
}

// Fork forks a conversation.
func (c Client) Fork(ctx context.Context, req ForkRequest) (ForkReply, error) {
	var r ForkReply
	return r, c.call(ctx, VerbFork, req, &r)
}

// Send appends a user message to a conversation.
func (c Client) Send(ctx context.Context, req SendRequest) (Reply, error) {
	var r Reply
	return r, c.call(ctx, VerbSend, req, &r)
}

// Cancel cancels a conversation's turn.
func (c Client) Cancel(ctx context.Context, req CancelRequest) (Reply, error) {
	var r Reply
	return r, c.call(ctx, VerbCancel, req, &r)
}

// Approve answers a tool call awaiting approval.
func (c Client) Approve(ctx context.Context, req ApproveRequest) (Reply, error) {
	var r Reply
	return r, c.call(ctx, VerbApprove, req, &r)
}

// Rewind puts back the files a conversation changed after a step and
// forks it there.
func (c Client) Rewind(ctx context.Context, req RewindRequest) (RewindReply, error) {
	var r RewindReply
	return r, c.call(ctx, VerbRewind, req, &r)
}

// Mode sets a conversation's permission mode.
func (c Client) Mode(ctx context.Context, req ModeRequest) (Reply, error) {
	var r Reply
	return r, c.call(ctx, VerbMode, req, &r)
}

// Compact compacts a conversation now, between turns.
func (c Client) Compact(ctx context.Context, req CompactRequest) (Reply, error) {
	var r Reply
	return r, c.call(ctx, VerbCompact, req, &r)
}

func (c Client) call(ctx context.Context, verb string, req, result any) error {
	r := natsbus.Requester{NC: c.NC, Subjects: c.Subjects, Timeout: c.Timeout, Denials: c.Denials}
	return r.Call(ctx, Area, verb, req, result)
}
