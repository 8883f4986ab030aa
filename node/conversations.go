package node

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jido-bus/jido-bus/agents"
	"github.com/jido-bus/jido-bus/agents/runtime"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/natsbus"
	"github.com/jido-bus/jido-bus/conversation"
	"github.com/jido-bus/jido-bus/conversation/views"
	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/jido-bus/jido-bus/projects"
)

// resumeConversations closes the work every running conversation left
// unfinished (tool calls requested and never answered, an LLM call in
// flight): each becomes a failure with reason "interrupted", handed to the
// conversation's agent like any event, so nothing requested is silently
// forgotten. The events' ids derive from what they close, so doing this
// twice appends nothing new.
//
// Most conversations have nothing open, and the agent's own small state
// says so (pending_tools, llm_request): for a passive agent that is one
// snapshot read, so only the conversations with open work pay for reading
// their stream, which Interruptions needs for the order of that work.
func (n *Node) resumeConversations(ctx context.Context, why string) {
	for _, listed := range n.rt.ListSome(runtime.ListOptions{Type: conversation.AgentType}) {
		info, err := n.rt.State(listed.ID)
		if err == nil {
			var st conversation.AgentState
			if st, err = conversation.ReadState(info.State); err == nil && !st.OpenWork() {
				continue
			}
		}
		if err != nil {
			// Reading the stream decides then, as it always can.
			n.log.Warn("conversation state unreadable; reading its stream", "conversation", listed.ID, "err", err)
		}
		if err := n.resumeConversation(ctx, listed.ID, why); err != nil {
			n.log.Error("resume conversation", "conversation", listed.ID, "err", err)
		}
	}
}

func (n *Node) resumeConversation(ctx context.Context, key, why string) error {
	st := views.NewStatus()
	for e, err := range n.evlog.ReadStream(conversation.Stream(key), eventlog.ReadOptions{Types: conversation.TypePattern}) {
		if err != nil {
			return err
		}
		if ev := views.Decode(e); ev != nil {
			st.Fold(ev)
		}
	}
	events, err := views.Interruptions(key, st, time.Now().UTC(), why)
	if err != nil {
		return err
	}
	// The loop may have decided an LLM call whose conversation.llm.requested
	// never committed; it is interrupted all the same, so the loop asks
	// again rather than wait for it forever.
	if info, err := n.rt.State(key); err == nil {
		if as, err := conversation.ReadState(info.State); err == nil && as.Loop.Request != "" && (st.LLMRequest == nil || st.LLMRequest.EventID != as.Loop.Request) {
			req := as.Loop.Request
			ev, err := llmInterrupted(key, req, why)
			if err != nil {
				return err
			}
			events = append(events, ev)
		}
	}
	for _, ev := range events {
		if _, err := n.rt.Call(ctx, key, ev); err != nil {
			return err
		}
	}
	if len(events) > 0 {
		n.log.Info("conversation resumed", "conversation", key, "interrupted", len(events))
	}
	return nil
}

// convSendRequest is the body of jido.api.conv.send.
type convSendRequest struct {
	Conv string `json:"conv"` // <project-id>/<conversation-id>
	Text string `json:"text"`
}

// convSend appends a user message to a conversation, starting it in its
// open project (ConvStart) when it does not run yet.
func (n *Node) convSend(ctx context.Context, req []byte) (any, error) {
	var r convSendRequest
	if err := natsbus.DecodeRequest(req, &r); err != nil {
		return nil, err
	}
	if err := conversation.CheckKey(r.Conv); err != nil {
		return nil, bus.Errorf(bus.ReasonInvalidRequest, "conv %q: %v", r.Conv, err)
	}
	if r.Text == "" {
		return nil, bus.Errorf(bus.ReasonInvalidRequest, `request has no text: send {"conv":"<project>/<conversation>","text":"…"}`)
	}
	if err := n.ensureConversation(ctx, r.Conv); err != nil {
		return nil, err
	}
	sig, err := agents.NewSignal(conversation.UserMessage, conversation.Data{Text: r.Text})
	if err != nil {
		return nil, err
	}
	sig.SetID(bus.NewID())
	sig.SetSource(conversation.Source(r.Conv))
	sig.SetTime(time.Now().UTC())
	sig.SetExtension(bus.ExtCausationID, sig.ID())
	reply, err := n.rt.Call(ctx, r.Conv, sig)
	if err != nil {
		return nil, err
	}
	return map[string]any{"id": sig.ID(), "conv": r.Conv, "version": reply.Version}, nil
}

// ensureConversation starts conversation key in its open project, unless
// it runs. A conversation whose stream exists with no agent running was
// stopped (or its agent failed for good) and is refused: starting it
// again would take its start record and conversation.started for repeats
// of the first ones, and carry on after the stopped record with an empty
// state.
//
// A key whose project is not open is refused: ids under a project's id
// are the project's, open or not (projects/engine_conv_owned.go). Before,
// such a send started a conversation driven from outside, which took
// model answers from any client and kept taking them once a project of
// that id opened, showing them as its assistant's (conv show, the
// project's A2A task). A conversation that a service of yours drives is
// started by an operator (agent start conversation --id KEY) under an id
// that no project uses; its first conv send gives it its
// conversation.started, as conv send did when it started one.
func (n *Node) ensureConversation(ctx context.Context, key string) error {
	if info, err := n.rt.State(key); err == nil {
		if st, err := conversation.ReadState(info.State); err == nil && info.Type == conversation.AgentType && st.Events == 0 {
			// An operator's agent start begins no conversation: its first
			// message does, as conv send always began one.
			return n.appendStarted(ctx, key)
		}
		return nil
	}
	if err := n.neverStarted(key); err != nil {
		return bus.Errorf(runtime.ReasonStopped, "%v, and its agent has stopped; fork it to go on from its history (jido-bus conv fork %s --at SEQ)", err, key)
	}
	project, conv, _ := cut(key)
	if n.projects == nil || !n.projects.Has(project) {
		return bus.Errorf(bus.ReasonNotFound, "conversation %s does not run and no project %s is open: a conversation starts in its project (jido-bus project open PATH --id %s, then conv send), and ids under a project's id are the project's whether it is open or not; a conversation your own service drives is started by an operator (jido-bus agent start conversation --id %s) under an id no project uses", key, project, project, key)
	}
	return n.startInProject(ctx, project, conv, key)
}

// appendStarted gives conversation key, running and empty, its
// conversation.started (its id derived from the key, so a repeat is a
// duplicate), driven from outside.
func (n *Node) appendStarted(ctx context.Context, key string) error {
	project, conv, _ := cut(key)
	started, err := agents.NewSignal(conversation.Started, conversation.Data{ProjectID: project, ConversationID: conv})
	if err != nil {
		return err
	}
	started.SetID("started." + key)
	started.SetSource(conversation.Source(key))
	started.SetTime(time.Now().UTC())
	started.SetExtension(bus.ExtCausationID, started.ID())
	_, err = n.rt.Call(ctx, key, started)
	return err
}

// startInProject starts conversation key of open project through the
// engine, so it is the project's child: listed by project conv ls,
// stopped when the project closes, recorded in its stream. A concurrent
// send that started it first (already_exists while it now runs) is no
// error; a stopped conversation's id stays refused, as ConvStart says.
func (n *Node) startInProject(ctx context.Context, project, conv, key string) error {
	_, err := n.projects.ConvStart(ctx, projects.ConvStartRequest{Project: project, Conversation: conv})
	if err != nil && bus.ErrorType(err) == runtime.ReasonAlreadyExists {
		if _, serr := n.rt.State(key); serr == nil {
			return nil
		}
	}
	return err
}

// startFork makes the fork key a live conversation: it starts the
// conversation's agent and hands it the fork's events (views.Fork)
// in order, so the fork's stream holds the copied history and the agent's
// state reflects it, as if the conversation had been lived. The agent is
// then an agent like any other: conv send reaches it and recovery restarts
// it. A key that names an agent, running or stopped, is refused by Start
// (already_exists) before anything is written.
//
// Should an event be refused midway, the fork stays with the history
// handed so far and the error names the event; the caller decides.
func (n *Node) startFork(ctx context.Context, key string, events []bus.Signal) (eventlog.AppendResult, error) {
	if err := n.forkOwned(key, events); err != nil {
		return eventlog.AppendResult{}, err
	}
	if err := n.neverStarted(key); err != nil {
		return eventlog.AppendResult{}, fmt.Errorf("%w: %w", err, eventlog.ErrWrongVersion)
	}
	if _, err := n.rt.Start(ctx, runtimeStart(key)); err != nil {
		return eventlog.AppendResult{}, err
	}
	res := eventlog.AppendResult{Stream: conversation.Stream(key)}
	for i, ev := range events {
		reply, err := n.rt.Call(ctx, key, ev)
		if err != nil {
			return res, fmt.Errorf("fork %s: event %d of %d (%s %s): %w", key, i+1, len(events), ev.Type(), ev.ID(), err)
		}
		res.Version = reply.Version
	}
	return res, nil
}

// forkOwned refuses a fork that would be driven from outside (its parent
// is: the assistant's loop off) under the id of a project of the node,
// whose conversation ids are its own and driven by its assistant.
func (n *Node) forkOwned(key string, events []bus.Signal) error {
	project, _, _ := cut(key)
	if len(events) == 0 || events[0].Type() != conversation.Started || n.projects == nil || !n.projects.Has(project) {
		return nil
	}
	d, err := conversation.DecodeData(events[0].Data())
	if err != nil || d.Assistant {
		return nil
	}
	return bus.Errorf(bus.ReasonForbidden, "fork %s would be driven from outside, as its parent is, under the id of project %s, whose conversations its assistant drives; fork it under an id no project uses", key, project)
}

// neverStarted fails when conversation key's stream exists: its id has
// been used, by a conversation running or one that has stopped. (The
// runtime's Start does not tell a stopped agent's id from a new one: the
// start record it writes is the first one's repeat, so the log's
// idempotency passes over it.)
func (n *Node) neverStarted(key string) error {
	stream := conversation.Stream(key)
	if _, err := n.evlog.Stream(stream); err == nil {
		return fmt.Errorf("conversation %s has been used: its stream %s has entries", key, stream)
	}
	return nil
}

func runtimeStart(key string) runtime.StartRequest {
	return runtime.StartRequest{Type: conversation.AgentType, ID: key}
}

// cut splits a conversation key into its project and conversation ids.
func cut(key string) (project, conv string, ok bool) { return strings.Cut(key, "/") }

// llmInterrupted is the conversation.llm.failed that closes LLM call req
// of conversation key after a restart, with the id Interruptions gives it.
func llmInterrupted(key, req, why string) (bus.Signal, error) {
	sig, err := agents.NewSignal(conversation.LLMFailed, conversation.Data{
		Error: bus.Errorf(conversation.ReasonInterrupted, "LLM call %s did not finish: %s", req, why),
	})
	if err != nil {
		return sig, err
	}
	sig.SetID("interrupted." + req)
	sig.SetSource(conversation.Source(key))
	sig.SetTime(time.Now().UTC())
	sig.SetExtension(bus.ExtCausationID, req)
	return sig, nil
}
