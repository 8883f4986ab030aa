package projects

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/jido-bus/jido-bus/agents"
	"github.com/jido-bus/jido-bus/agents/runtime"
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

// ConversationStopped records project.conv.stopped in project id's
// stream, then drops what the conversation kept for a rewind: it ended
// for good and is never rewound.
func (e *Engine) ConversationStopped(ctx context.Context, id, conv, reason string) error {
	if err := e.send(ctx, id, TypeConvStopped, ConvData{Conversation: conv, ID: id + "/" + conv, Reason: reason}); err != nil {
		return err
	}
	e.forgetStopped(id + "/" + conv)
	return nil
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

// Conversation ids under a project's id, <project>/<conversation>, are the
// project's, whether it is open or not: a conversation is started in it
// through the project (conversation/convapi's Start), with the
// assistant's loop on, and the node refuses a client that would start one
// otherwise. A conversation
// driven from outside (loop off: its model answers and tool calls are
// whatever its sender writes) under a project's id would show those
// answers as the project's, in conv ls and conv show and as the
// project's A2A task.
//
// An older node let conv send start one before the project was opened;
// an operator may start one with agent start while the project is closed.
// So when a project opens (Open, and Restore after a restart), each
// conversation agent under its id that is not its child and whose loop
// is off is stopped — disowned: its stream keeps its history for
// whoever wants to read it, but nothing more is written to it (a stopped
// conversation refuses conv send, and its id is not reused), it is no
// task of the project's A2A agent, and project.conv.stopped in the
// project's stream says why.

// DisownedReason is the reason recorded in project.conv.stopped for a
// conversation stopped by its project's open.
const DisownedReason = "disowned: started outside the project (driven from outside, not by the project's assistant), and ids under a project's id are the project's; its stream keeps its history"

// Has reports whether id is a project of the engine: open, being opened,
// or listed with the error that kept it from reopening. The conversation
// ids under it are its own.
func (e *Engine) Has(id string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	_, ok := e.projects[id]
	return ok
}

// disown stops the conversations running under project id's id that are
// not its own (see above) and records each as project.conv.stopped. A
// conversation that cannot be stopped is logged: the node's guard refuses
// anything but what people say to every conversation under an open
// project's id all the same.
func (e *Engine) disown(ctx context.Context, id string) {
	for _, key := range e.strangers(id) {
		if err := e.rt.Stop(ctx, key, DisownedReason); err != nil {
			e.log.Error("a conversation started outside its project could not be stopped; nothing but what people say is taken by it", "project", id, "conversation", key, "err", err)
			continue
		}
		conv := strings.TrimPrefix(key, id+"/")
		if err := e.ConversationStopped(ctx, id, conv, DisownedReason); err != nil {
			e.log.Error("record a disowned conversation", "project", id, "conversation", key, "err", err)
		}
		e.log.Warn("conversation started outside its project stopped at the project's open; its stream keeps its history", "project", id, "conversation", key)
	}
}

// strangers are the conversation agents under project id's id that are
// not its children and whose assistant's loop is off.
func (e *Engine) strangers(id string) []string {
	children := e.children(id)
	var out []string
	for _, a := range e.rt.ListSome(runtime.ListOptions{Type: conversation.AgentType}) {
		if !strings.HasPrefix(a.ID, id+"/") || slices.Contains(children, a.ID) {
			continue
		}
		info, err := e.rt.State(a.ID)
		if err != nil {
			continue
		}
		if st, err := conversation.ReadState(info.State); err == nil && st.Loop.On {
			continue
		}
		out = append(out, a.ID)
	}
	return out
}
