package projects

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/jido-bus/jido-bus/conversation"
	"slices"
	"strings"
	"time"

	"github.com/jido-bus/jido-bus/agents"
	"github.com/jido-bus/jido-bus/agents/runtime"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/eventlog"
)

// StreamLookup tells whether a log stream exists; the node's
// *eventlog.Log is one. The engine asks it before starting a
// conversation, so a stopped conversation's id is never taken again (its
// stream keeps its history; the runtime alone would start a new agent
// over it).
type StreamLookup interface {
	Stream(stream string) (eventlog.StreamInfo, error)
}

// ConvStartRequest is what ConvStart needs; it is also the body of
// <prefix>.api.project.conv.start.
type ConvStartRequest struct {
	Project string `json:"project"`
	// Conversation is the conversation's id in the project, one segment
	// of [A-Za-z0-9_-] starting with a letter or digit; empty means a new
	// ULID. Its agent id is <project>/<conversation>.
	Conversation string `json:"conversation,omitempty"`
	// System is the system prompt, the first message of every LLM call.
	System string `json:"system,omitempty"`
	// LLM overrides the project's model settings (.jido/config.yaml)
	// for this conversation: provider, model, base URL, the name of the
	// variable holding the key — never a key.
	LLM *conversation.LLMConfig `json:"llm,omitempty"`
	// Limits bound each turn (max steps, max tool calls, parallel tools).
	Limits *conversation.Limits `json:"limits,omitempty"`
	// By is who started it, recorded as conversation.started's data.by:
	// the A2A gateway's owner of the task (a2agw.OwnerOf). Set by Go
	// callers only (json "-"): a request over NATS cannot make its
	// conversation another caller's task.
	By string `json:"-"`
}

// ConvInfo describes a conversation of a project.
type ConvInfo struct {
	Project      string `json:"project"`
	Conversation string `json:"conversation"`
	// ID is the conversation's agent id, <project>/<conversation>: the
	// conv of conv send and conv show.
	ID     string `json:"id"`
	Stream string `json:"stream"`
	// Status is its agent's: running or passive (idle, woken by its next
	// signal).
	Status string `json:"status"`
}

// ConvStart starts a conversation in project req.Project: a conversation
// agent <project>/<conversation>, child of the project's agent (so it
// stops when the project closes, and comes back with it after a
// restart), with its conversation.started event, recorded as
// project.conv.started in the project's stream. Refusals: invalid_request
// (a bad conversation id), not_found (no such open project),
// unavailable (a project listed with an error), already_exists (the id is
// running, or was used by a conversation since stopped).
func (e *Engine) ConvStart(ctx context.Context, req ConvStartRequest) (ConvInfo, error) {
	p, err := e.usable(req.Project)
	if err != nil {
		return ConvInfo{}, err
	}
	conv := req.Conversation
	if conv == "" {
		conv = bus.NewID()
	}
	if err := conversation.ValidateID(conv); err != nil {
		return ConvInfo{}, err
	}
	if err := req.LLM.Check(); err != nil {
		return ConvInfo{}, err
	}
	if err := req.Limits.Check(); err != nil {
		return ConvInfo{}, err
	}
	key := p.id + "/" + conv
	if _, err := e.rt.State(key); err == nil {
		return ConvInfo{}, bus.Errorf(runtime.ReasonAlreadyExists, "conversation %s runs already; send to it (conv send %s), or choose another id", key, key)
	}
	if e.cfg.Streams != nil {
		if _, err := e.cfg.Streams.Stream(conversation.Stream(key)); err == nil {
			return ConvInfo{}, bus.Errorf(runtime.ReasonAlreadyExists, "conversation %s has been used and stopped (its stream %s keeps its history); choose another id, or fork it (conv fork %s --at SEQ)", key, conversation.Stream(key), key)
		} else if !errors.Is(err, eventlog.ErrNotFound) {
			return ConvInfo{}, fmt.Errorf("conversation %s: look its stream up: %w", key, err)
		}
	}
	if _, err := e.rt.Start(ctx, runtime.StartRequest{Type: conversation.AgentType, ID: key, Parent: &runtime.ParentRef{ID: p.id, Tag: conv}}); err != nil {
		return ConvInfo{}, err
	}
	if err := e.convStarted(ctx, p.id, conv, key, req); err != nil {
		// Whatever half started is stopped, so nothing runs unlisted; the
		// id stays used (its stream has the start).
		if serr := e.rt.Stop(context.WithoutCancel(ctx), key, "start failed"); serr != nil && bus.ErrorType(serr) != bus.ReasonNotFound {
			e.log.Error("stop a conversation that failed to start", "conversation", key, "err", serr)
		}
		return ConvInfo{}, fmt.Errorf("start conversation %s: %w", key, err)
	}
	e.log.Info("conversation started", "project", p.id, "conversation", key)
	return e.convInfo(p.id, conv, key), nil
}

// convStarted gives the new conversation its conversation.started (the
// id derived from the key, as conv send does, so a repeat is a
// duplicate) and records it in the project's stream.
func (e *Engine) convStarted(ctx context.Context, project, conv, key string, req ConvStartRequest) error {
	// A conversation of a project talks to its model: the loop is on.
	started, err := agents.NewSignal(conversation.Started, conversation.Data{
		ProjectID: project, ConversationID: conv, System: req.System,
		Assistant: true, LLM: req.LLM, Limits: req.Limits, Loop: conversation.LoopVersion, By: req.By,
	})
	if err != nil {
		return err
	}
	started.SetID("started." + key)
	started.SetSource(conversation.Source(key))
	started.SetTime(time.Now().UTC())
	started.SetExtension(bus.ExtCausationID, started.ID())
	cctx, cancel := context.WithTimeout(ctx, e.cfg.CommitTimeout)
	_, err = e.rt.Call(cctx, key, started)
	cancel()
	if err != nil {
		return fmt.Errorf("record %s: %w", conversation.Started, err)
	}
	if err := e.send(ctx, project, TypeConvStarted, ConvData{Conversation: conv, ID: key, By: req.By}); err != nil {
		return fmt.Errorf("record %s in project %s: %w", TypeConvStarted, project, err)
	}
	return nil
}

// ConvStop stops conversation conv of project (its agent stops; its
// stream stays) and records project.conv.stopped. A conversation that is
// not a running child of the project is not_found.
func (e *Engine) ConvStop(ctx context.Context, project, conv, reason string) error {
	p, err := e.lookup(project)
	if err != nil {
		return err
	}
	if err := conversation.ValidateID(conv); err != nil {
		return err
	}
	if reason == "" {
		reason = "stopped"
	}
	key := p.id + "/" + conv
	running := slices.Contains(e.children(p.id), key)
	listed := slices.Contains(e.listed(p.id), conv)
	if !running && !listed {
		return bus.Errorf(bus.ReasonNotFound, "project %s has no conversation %q running; list them with project conv ls %s", p.id, conv, p.id)
	}
	if running {
		if err := e.rt.Stop(ctx, key, reason); err != nil && bus.ErrorType(err) != bus.ReasonNotFound {
			return fmt.Errorf("stop conversation %s: %w", key, err)
		}
	}
	// A conversation listed but gone (stopped by other means) is taken
	// off the list the same way.
	if err := e.send(ctx, p.id, TypeConvStopped, ConvData{Conversation: conv, ID: key, Reason: reason}); err != nil {
		return fmt.Errorf("record %s in project %s: %w", TypeConvStopped, p.id, err)
	}
	e.log.Info("conversation stopped", "project", p.id, "conversation", key, "reason", reason)
	return nil
}

// ConvList describes project's running conversations, by id: the
// runtime's children of the project's agent, which is what recovery
// brings back after a restart.
func (e *Engine) ConvList(project string) ([]ConvInfo, error) {
	p, err := e.lookup(project)
	if err != nil {
		return nil, err
	}
	keys := e.children(p.id)
	out := make([]ConvInfo, 0, len(keys))
	for _, key := range keys {
		out = append(out, e.convInfo(p.id, strings.TrimPrefix(key, p.id+"/"), key))
	}
	return out, nil
}

// children returns the agent ids of project's conversations: the
// runtime's children of its agent that are conversations, sorted.
func (e *Engine) children(project string) []string {
	info, err := e.rt.State(project)
	if err != nil {
		return nil
	}
	var keys []string
	for _, id := range info.Children {
		if strings.HasPrefix(id, project+"/") {
			keys = append(keys, id)
		}
	}
	slices.Sort(keys)
	return keys
}

// listed returns the conversations list of project's agent state.
func (e *Engine) listed(project string) []string {
	info, err := e.rt.State(project)
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

func (e *Engine) convInfo(project, conv, key string) ConvInfo {
	in := ConvInfo{Project: project, Conversation: conv, ID: key, Stream: conversation.Stream(key), Status: runtime.StatusRunning}
	if info, err := e.rt.State(key); err == nil {
		in.Status = info.Status
	}
	return in
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
