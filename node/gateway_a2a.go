package node

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"

	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/conversation"
	"github.com/jido-bus/jido-bus/conversation/views"
	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/jido-bus/jido-bus/projects"
	"github.com/jido-bus/jido-bus/projects/assets"
	"github.com/jido-bus/jido-bus/projects/gateway"
	a2agw "github.com/jido-bus/jido-bus/projects/gateway/a2a"
)

// A2AHost is what the A2A gateway (projects/gateway/a2a) needs of the
// node: its open projects, their conversations through the same paths as
// the NATS API (conv send, conv cancel), the log to read and follow them,
// and the project stream to record each request in.
func (n *Node) A2AHost() a2agw.Host { return a2aHost{n} }

type a2aHost struct{ n *Node }

// deltaBuffer bounds the assistant deltas a follower holds for a slow
// client; past it NATS drops them (they are transient: the final message
// carries the whole text).
const deltaBuffer = 256

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
	info, err := e.Get(id)
	if err != nil {
		return a2agw.Project{}, err
	}
	if info.Status != projects.StatusOpen {
		return a2agw.Project{}, bus.Errorf(bus.ReasonUnavailable, "project %s is not usable (%s): jido-bus project ls says why", id, info.Status)
	}
	listed, err := e.Assets(projects.AssetsRequest{Project: id})
	if err != nil {
		return a2agw.Project{}, err
	}
	p := a2agw.Project{ID: id, Description: fmt.Sprintf("jido-bus project %s: a coding assistant working on the project's files with its tools, commands, workflows and skills", id)}
	// A skill's id is the name of the tool that runs the asset
	// (<kind>_<name>), the one name an asset has everywhere.
	for _, c := range listed.Commands {
		p.Skills = append(p.Skills, a2agw.Skill{ID: assets.ToolName(assets.KindCommand, c.Name), Name: c.Name, Description: c.Description, Tags: []string{"command"}})
	}
	for _, w := range listed.Workflows {
		p.Skills = append(p.Skills, a2agw.Skill{ID: assets.ToolName(assets.KindWorkflow, w.Name), Name: w.Name, Description: w.Description, Tags: []string{"workflow"}})
	}
	for _, s := range listed.Skills {
		p.Skills = append(p.Skills, a2agw.Skill{ID: assets.ToolName(assets.KindSkill, s.Name), Name: s.Name, Description: s.Description, Tags: []string{"skill"}})
	}
	return p, nil
}

// RecordGatewayRequest implements gateway.Recorder.
func (h a2aHost) RecordGatewayRequest(ctx context.Context, project string, r gateway.Request) error {
	e, err := h.engine()
	if err != nil {
		return err
	}
	return e.RecordGatewayRequest(ctx, project, r)
}

// StartConversation implements a2agw.Host through the engine's ConvStart.
func (h a2aHost) StartConversation(ctx context.Context, project, conv, owner string) error {
	e, err := h.engine()
	if err != nil {
		return err
	}
	_, err = e.ConvStart(ctx, projects.ConvStartRequest{Project: project, Conversation: conv, By: owner})
	return err
}

// SendMessage implements a2agw.Host through conv send.
func (h a2aHost) SendMessage(ctx context.Context, key, text string) (string, error) {
	req, err := json.Marshal(convSendRequest{Conv: key, Text: text})
	if err != nil {
		return "", err
	}
	reply, err := h.n.convSend(ctx, req)
	if err != nil {
		return "", err
	}
	id, _ := reply.(map[string]any)["id"].(string)
	if id == "" {
		return "", fmt.Errorf("conv send %s answered %v, without the message's id", key, reply)
	}
	return id, nil
}

// CancelConversation implements a2agw.Host through conv cancel.
func (h a2aHost) CancelConversation(ctx context.Context, key, reason string) error {
	req, err := json.Marshal(convCancelRequest{Conv: key, Reason: reason})
	if err != nil {
		return err
	}
	_, err = h.n.convCancel(ctx, req)
	return err
}

// ConversationEvents implements a2agw.Host from the conversation's stream.
func (h a2aHost) ConversationEvents(_ context.Context, key string) ([]*views.Event, error) {
	var out []*views.Event
	for e, err := range h.n.evlog.ReadStream(conversation.Stream(key), eventlog.ReadOptions{Types: conversation.TypePattern}) {
		if errors.Is(err, eventlog.ErrNotFound) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read conversation %s: %w", key, err)
		}
		out = append(out, views.Decode(e))
	}
	return out, nil
}

// followed is one item a follower hands from its log reader.
type followed struct {
	entry eventlog.Entry
	err   error
}

// FollowConversation implements a2agw.Host: the conversation's stream
// from after+1 through a log subscription (in order, without a gap, from
// disk wherever the reader stands: a node restarted since the task began
// serves it the same), and its assistant deltas from NATS, where alone
// they are published (<prefix>.emit.<key>.conversation.assistant.delta).
// Both are subscribed before it returns, so that a caller that follows
// before it sends a message hears every delta of the answer; both end
// with ctx.
func (h a2aHost) FollowConversation(ctx context.Context, key string, after uint64) (iter.Seq2[*views.Event, error], error) {
	deltas := make(chan *nats.Msg, deltaBuffer)
	sub, err := h.n.conn.nc.ChanSubscribe(h.n.subjects.Emit(key, conversation.AssistantDelta), deltas)
	if err != nil {
		return nil, bus.Errorf(bus.ReasonUnavailable, "follow conversation %s: subscribe to its deltas: %v", key, err)
	}
	ls, err := h.n.evlog.Subscribe(eventlog.SubscribeOptions{Stream: conversation.Stream(key), From: after + 1, Types: conversation.TypePattern})
	if err != nil {
		_ = sub.Unsubscribe()
		return nil, fmt.Errorf("follow conversation %s: %w", key, err)
	}
	entries := make(chan followed)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer ls.Close()
		defer func() { _ = sub.Unsubscribe() }()
		for {
			e, err := ls.Next(ctx)
			if ctx.Err() != nil {
				return
			}
			if _, corrupt := errors.AsType[*eventlog.CorruptError](err); corrupt {
				continue
			}
			select {
			case entries <- followed{e, err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return func(yield func(*views.Event, error) bool) {
		for {
			// A delta published after the entries already read is still
			// taken after them: entries first, when both wait.
			select {
			case f := <-entries:
				if !yieldEntry(f, yield) {
					return
				}
				continue
			default:
			}
			select {
			case <-ctx.Done():
				return
			case <-done:
				return
			case f := <-entries:
				if !yieldEntry(f, yield) {
					return
				}
			case msg := <-deltas:
				d, err := h.n.bus.Decode(msg)
				if err != nil {
					continue
				}
				ev := &views.Event{Type: d.Signal.Type(), ID: d.Signal.ID(), CausationID: conversation.CausationID(d.Signal)}
				if data, err := conversation.DecodeData(d.Signal.Data()); err == nil {
					ev.Data = data
				}
				if !yield(ev, nil) {
					return
				}
			}
		}
	}, nil
}

// yieldEntry yields one followed entry, and reports whether to go on.
func yieldEntry(f followed, yield func(*views.Event, error) bool) bool {
	if f.err != nil {
		if errors.Is(f.err, eventlog.ErrClosed) {
			f.err = bus.Errorf(bus.ReasonUnavailable, "the node is shutting down; resubscribe to the task once it is back")
		}
		yield(nil, f.err)
		return false
	}
	return yield(views.Decode(f.entry), nil)
}
