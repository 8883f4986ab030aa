package convapi

import (
	"context"

	"github.com/jido-bus/jido-bus/agents/runtime"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/conversation"
)

// Send appends a user message to a conversation, starting it in its open
// project (Start) when it does not run yet.
func (s *Service) Send(ctx context.Context, req SendRequest) (Reply, error) {
	if err := conversation.CheckKey(req.Conv); err != nil {
		return Reply{}, bus.Errorf(bus.ReasonInvalidRequest, "conv %q: %v", req.Conv, err)
	}
	if req.Text == "" {
		return Reply{}, bus.Errorf(bus.ReasonInvalidRequest, `request has no text: send {"conv":"<project>/<conversation>","text":"…"}`)
	}
	if err := s.ensure(ctx, req.Conv); err != nil {
		return Reply{}, err
	}
	id := bus.NewID()
	return s.call(ctx, req.Conv, conversation.UserMessage, id, id, conversation.Data{Text: req.Text})
}

// ensure starts conversation key in its open project, unless it runs. A
// conversation whose stream exists with no agent running was stopped (or
// its agent failed for good) and is refused: starting it again would take
// its start record and conversation.started for repeats of the first
// ones, and carry on after the stopped record with an empty state.
//
// A key whose project is not open is refused: ids under a project's id
// are the project's, open or not (projects/conversations.go). Before, such a
// send started a conversation driven from outside, which took model
// answers from any client and kept taking them once a project of that id
// opened, showing them as its assistant's (conv show, the project's A2A
// task). A conversation that a service of yours drives is started by an
// operator (agent start conversation --id KEY) under an id that no
// project uses; its first conv send gives it its conversation.started, as
// conv send did when it started one.
func (s *Service) ensure(ctx context.Context, key string) error {
	if info, err := s.rt.State(key); err == nil {
		if st, err := conversation.ReadState(info.State); err == nil && info.Type == conversation.AgentType && st.Events == 0 {
			// An operator's agent start begins no conversation: its first
			// message does, as conv send always began one. It is driven
			// from outside.
			project, conv, _ := cut(key)
			return s.appendStarted(ctx, key, conversation.Data{ProjectID: project, ConversationID: conv})
		}
		return nil
	}
	if err := s.neverStarted(key); err != nil {
		return bus.Errorf(runtime.ReasonStopped, "%v, and its agent has stopped; fork it to go on from its history (jido-bus conv fork %s --at SEQ)", err, key)
	}
	project, conv, _ := cut(key)
	if !s.projects.Has(project) {
		return bus.Errorf(bus.ReasonNotFound, "conversation %s does not run and no project %s is open: a conversation starts in its project (jido-bus project open PATH --id %s, then conv send), and ids under a project's id are the project's whether it is open or not; a conversation your own service drives is started by an operator (jido-bus agent start conversation --id %s) under an id no project uses", key, project, project, key)
	}
	return s.startInProject(ctx, project, conv, key)
}

// startInProject starts conversation key of open project (Start), so it
// is the project's child: stopped when the project closes, recorded in
// its stream. A concurrent send that started it first (already_exists
// while it now runs) is no error; a stopped conversation's id stays
// refused, as Start says.
func (s *Service) startInProject(ctx context.Context, project, conv, key string) error {
	_, err := s.Start(ctx, StartRequest{Project: project, Conversation: conv})
	if err != nil && bus.ErrorType(err) == runtime.ReasonAlreadyExists {
		if _, serr := s.rt.State(key); serr == nil {
			return nil
		}
	}
	return err
}
