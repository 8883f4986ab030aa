package node

import (
	"context"
	"iter"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/conversation/convapi"
	"github.com/jido-bus/jido-bus/conversation/views"
	"github.com/jido-bus/jido-bus/projects"
	"github.com/jido-bus/jido-bus/projects/gateway"
	a2agw "github.com/jido-bus/jido-bus/projects/gateway/a2a"
)

// A2AHost is what the A2A gateway (projects/gateway/a2a) needs of the
// node: its open projects, their conversations through the same paths as
// the NATS API (conv send, conv cancel), the log to read and follow them,
// and the project stream to record each request in.
func (n *Node) A2AHost() a2agw.Host { return a2aHost{n} }

type a2aHost struct{ n *Node }

func (h a2aHost) engine() (*projects.Engine, error) {
	if h.n.projects == nil {
		return nil, bus.Errorf(bus.ReasonUnavailable, "the node's project engine is not running yet; retry in a moment")
	}
	return h.n.projects, nil
}

// Project implements a2agw.Host: an open project and its commands,
// workflows and skills as the card's skills.
func (h a2aHost) Project(_ context.Context, id string) (a2agw.Project, error) {
	e, err := h.engine()
	if err != nil {
		return a2agw.Project{}, err
	}
	return a2agw.ProjectOf(e, id)
}

// RecordGatewayRequest implements gateway.Recorder.
func (h a2aHost) RecordGatewayRequest(ctx context.Context, project string, r gateway.Request) error {
	e, err := h.engine()
	if err != nil {
		return err
	}
	return e.RecordGatewayRequest(ctx, project, r)
}

// StartConversation implements a2agw.Host through conv start.
func (h a2aHost) StartConversation(ctx context.Context, project, conv, owner, mode string) error {
	_, err := h.n.conv.Start(ctx, convapi.StartRequest{Project: project, Conversation: conv, By: owner, Mode: mode})
	return err
}

// SendMessage implements a2agw.Host through conv send.
func (h a2aHost) SendMessage(ctx context.Context, key, text string) (string, error) {
	reply, err := h.n.conv.Send(ctx, convapi.SendRequest{Conv: key, Text: text})
	return reply.ID, err
}

// CancelConversation implements a2agw.Host through conv cancel.
func (h a2aHost) CancelConversation(ctx context.Context, key, reason string) error {
	_, err := h.n.conv.Cancel(ctx, convapi.CancelRequest{Conv: key, Reason: reason})
	return err
}

// ConversationEvents implements a2agw.Host (convapi's Events).
func (h a2aHost) ConversationEvents(ctx context.Context, key string) ([]*views.Event, error) {
	return h.n.conv.Events(ctx, key)
}

// FollowConversation implements a2agw.Host (convapi's Follow).
func (h a2aHost) FollowConversation(ctx context.Context, key string, after uint64) (iter.Seq2[*views.Event, error], error) {
	return h.n.conv.Follow(ctx, key, after)
}
