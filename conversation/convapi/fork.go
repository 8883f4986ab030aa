package convapi

import (
	"context"
	"errors"
	"fmt"

	"github.com/jido-bus/jido-bus/agents/runtime"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/conversation"
	"github.com/jido-bus/jido-bus/conversation/views"
	"github.com/jido-bus/jido-bus/eventlog"
)

// Fork forks a conversation (views.Fork) into a live one: the new
// conversation's agent starts and takes the fork's events, the copied
// history, in order. A taken id is a conflict.
func (s *Service) Fork(ctx context.Context, req ForkRequest) (ForkReply, error) {
	as, err := checkFork(req)
	if err != nil {
		return ForkReply{}, err
	}
	var entries []eventlog.Entry
	for e, err := range s.log.ReadStream(conversation.Stream(req.Conv), eventlog.ReadOptions{}) {
		if err != nil {
			return ForkReply{}, asNotFound(fmt.Errorf("conversation %s: %w", req.Conv, err))
		}
		if e.Seq > req.Seq {
			break
		}
		entries = append(entries, e)
	}
	events, err := views.Fork(req.Conv, entries, req.Seq, as, s.now().UTC())
	if err != nil {
		return ForkReply{}, bus.Errorf(bus.ReasonInvalidRequest, "%v", err)
	}
	res, err := s.startFork(ctx, as, events)
	if errors.Is(err, eventlog.ErrWrongVersion) || bus.ErrorType(err) == runtime.ReasonAlreadyExists {
		return ForkReply{}, bus.Errorf("conflict", "conversation %s already exists; choose another id with --as", as)
	}
	if err != nil {
		return ForkReply{}, err
	}
	return ForkReply{Conv: as, Stream: conversation.Stream(as), Events: len(events), Version: res.Version}, nil
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
func (s *Service) startFork(ctx context.Context, key string, events []bus.Signal) (eventlog.AppendResult, error) {
	if err := s.forkOwned(key, events); err != nil {
		return eventlog.AppendResult{}, err
	}
	if err := s.neverStarted(key); err != nil {
		return eventlog.AppendResult{}, fmt.Errorf("%w: %w", err, eventlog.ErrWrongVersion)
	}
	if _, err := s.rt.Start(ctx, runtime.StartRequest{Type: conversation.AgentType, ID: key}); err != nil {
		return eventlog.AppendResult{}, err
	}
	res := eventlog.AppendResult{Stream: conversation.Stream(key)}
	for i, ev := range events {
		reply, err := s.rt.Call(ctx, key, ev)
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
func (s *Service) forkOwned(key string, events []bus.Signal) error {
	project, _, _ := cut(key)
	if len(events) == 0 || events[0].Type() != conversation.Started || !s.projects.Has(project) {
		return nil
	}
	d, err := conversation.DecodeData(events[0].Data())
	if err != nil || d.Assistant {
		return nil
	}
	return bus.Errorf(bus.ReasonForbidden, "fork %s would be driven from outside, as its parent is, under the id of project %s, whose conversations its assistant drives; fork it under an id no project uses", key, project)
}

// checkFork checks a fork request and returns the new conversation's key.
func checkFork(req ForkRequest) (string, error) {
	if err := conversation.CheckKey(req.Conv); err != nil {
		return "", bus.Errorf(bus.ReasonInvalidRequest, "%v", err)
	}
	if req.Seq == 0 {
		return "", bus.Errorf(bus.ReasonInvalidRequest, "fork needs the sequence to fork at (--at)")
	}
	if req.As == "" {
		return fmt.Sprintf("%s-fork-%d", req.Conv, req.Seq), nil
	}
	return req.As, nil
}
