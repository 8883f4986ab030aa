package projects

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"

	"github.com/jido-bus/jido-bus/agents"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/conversation"
)

// A project's conversations are the conversation agents under its id, the
// children of its agent; conversation/convapi starts and stops them and
// asks the engine, through these methods (convapi.Projects), whether a
// project may have them and to record them in its stream, the project's
// audit trail, which the engine alone writes. Close waits for them to
// stop with the project.

// Usable fails unless project id is open and usable: not_found, or
// unavailable for a project listed with the error that kept it from
// reopening, saying what to do.
func (e *Engine) Usable(id string) error {
	_, err := e.usable(id)
	return err
}

// ConversationStarted records project.conv.started in project id's stream:
// its conversation conv started, by whom when a gateway did (by).
func (e *Engine) ConversationStarted(ctx context.Context, id, conv, by string) error {
	return e.send(ctx, id, TypeConvStarted, ConvData{Conversation: conv, ID: id + "/" + conv, By: by})
}

// ConversationStopped records project.conv.stopped in project id's stream.
func (e *Engine) ConversationStopped(ctx context.Context, id, conv, reason string) error {
	return e.send(ctx, id, TypeConvStopped, ConvData{Conversation: conv, ID: id + "/" + conv, Reason: reason})
}

// Conversations returns the conversations project id's stream records as
// started and not stopped (the list of its agent's state), by their ids
// in the project.
func (e *Engine) Conversations(id string) []string {
	info, err := e.rt.State(id)
	if err != nil {
		return nil
	}
	st := agents.State{}
	if err := json.Unmarshal(info.State, &st); err != nil {
		return nil
	}
	var out []string
	for _, c := range st.List("conversations") {
		if s, ok := c.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// children returns the agent ids of project's conversations: the
// runtime's children of its agent that are conversations, sorted.
func (e *Engine) children(project string) []string {
	info, err := e.rt.State(project)
	if err != nil {
		return nil
	}
	return conversation.Under(project, maps.Values(info.Children))
}

// awaitConversations waits until each of keys (a closing project's
// conversations, which stop with it) has stopped.
func (e *Engine) awaitConversations(ctx context.Context, keys []string) error {
	for _, key := range keys {
		wctx, cancel := context.WithTimeout(ctx, e.cfg.CommitTimeout)
		_, err := e.rt.Await(wctx, key)
		cancel()
		if err != nil && bus.ErrorType(err) != bus.ReasonNotFound {
			return fmt.Errorf("conversation %s has not stopped: %w", key, err)
		}
	}
	return nil
}
