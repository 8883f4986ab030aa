package convapi

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/jido-bus/jido-bus/agents/runtime"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/conversation"
	"github.com/jido-bus/jido-bus/eventlog"
)

// Start starts a conversation in project req.Project: a conversation
// agent <project>/<conversation>, child of the project's agent (so it
// stops when the project closes, and comes back with it after a
// restart), with its conversation.started event (the assistant's loop
// on), recorded as project.conv.started in the project's stream.
// Refusals: invalid_request (a bad conversation id, settings, limits,
// budget or mode),
// not_found (no such open project), unavailable (a project listed with an
// error), already_exists (the id is running, or was used by a
// conversation since stopped).
func (s *Service) Start(ctx context.Context, req StartRequest) (Info, error) {
	if req.Project == "" {
		return Info{}, bus.Errorf(bus.ReasonInvalidRequest, `request names no project: send {"project":"<project-id>"} (project ls lists them)`)
	}
	if err := s.projects.Usable(req.Project); err != nil {
		return Info{}, err
	}
	conv := req.Conversation
	if conv == "" {
		conv = bus.NewID()
	}
	if err := conversation.ValidateID(conv); err != nil {
		return Info{}, err
	}
	if err := req.LLM.Check(); err != nil {
		return Info{}, err
	}
	if err := req.Limits.Check(); err != nil {
		return Info{}, err
	}
	if err := req.Budget.Check(); err != nil {
		return Info{}, err
	}
	if err := conversation.CheckMode(req.Mode); err != nil {
		return Info{}, err
	}
	key := req.Project + "/" + conv
	if _, err := s.rt.State(key); err == nil {
		return Info{}, bus.Errorf(runtime.ReasonAlreadyExists, "conversation %s runs already; send to it (conv send %s), or choose another id", key, key)
	}
	if _, err := s.log.Stream(conversation.Stream(key)); err == nil {
		return Info{}, bus.Errorf(runtime.ReasonAlreadyExists, "conversation %s has been used and stopped (its stream %s keeps its history); choose another id, or fork it (conv fork %s --at SEQ)", key, conversation.Stream(key), key)
	} else if !errors.Is(err, eventlog.ErrNotFound) {
		return Info{}, fmt.Errorf("conversation %s: look its stream up: %w", key, err)
	}
	wt, err := s.startWorktree(ctx, conv, req)
	if err != nil {
		return Info{}, err
	}
	parent := &runtime.ParentRef{ID: req.Project, Tag: conv}
	if req.Delegated != nil {
		parent = &runtime.ParentRef{ID: req.Delegated.Conversation, Tag: conv}
	}
	if _, err := s.rt.Start(ctx, runtime.StartRequest{Type: conversation.AgentType, ID: key, Parent: parent}); err != nil {
		s.dropWorktree(ctx, key, req.Project, conv, wt)
		return Info{}, err
	}
	if err := s.started(ctx, key, conv, req, wt); err != nil {
		s.dropWorktree(ctx, key, req.Project, conv, wt)
		// Whatever half started is stopped, so nothing runs unlisted; the
		// id stays used (its stream has the start).
		if serr := s.rt.Stop(context.WithoutCancel(ctx), key, "start failed"); serr != nil && bus.ErrorType(serr) != bus.ReasonNotFound {
			s.logger.Error("stop a conversation that failed to start", "conversation", key, "err", serr)
		}
		return Info{}, fmt.Errorf("start conversation %s: %w", key, err)
	}
	s.logger.Info("conversation started", "project", req.Project, "conversation", key)
	return s.info(req.Project, conv, key), nil
}

// started gives the new conversation its conversation.started and
// records it in the project's stream.
func (s *Service) started(ctx context.Context, key, conv string, req StartRequest, wt *conversation.Worktree) error {
	// A conversation of a project talks to its model: the loop is on.
	cctx, cancel := context.WithTimeout(ctx, commitTimeout)
	err := s.appendStarted(cctx, key, conversation.Data{
		ProjectID: req.Project, ConversationID: conv, System: req.System,
		Assistant: true, LLM: req.LLM, Limits: req.Limits, Budget: req.Budget, Mode: req.Mode, Worktree: wt, Loop: conversation.LoopVersion, By: req.By,
		Delegated: req.Delegated, Tools: req.Tools,
	})
	cancel()
	if err != nil {
		return fmt.Errorf("record %s: %w", conversation.Started, err)
	}
	if err := s.projects.ConversationStarted(ctx, req.Project, conv, req.By); err != nil {
		return fmt.Errorf("record the start in project %s: %w", req.Project, err)
	}
	return nil
}

// appendStarted hands conversation key its conversation.started, its id
// derived from the key, so that a repeat is a duplicate the log drops.
func (s *Service) appendStarted(ctx context.Context, key string, d conversation.Data) error {
	id := "started." + key
	started, err := conversation.NewEvent(key, conversation.Started, id, id, s.now().UTC(), d)
	if err != nil {
		return err
	}
	_, err = s.rt.Call(ctx, key, started)
	return err
}

// Stop stops conversation req.Conversation of project req.Project (its
// agent stops; its stream stays) and records project.conv.stopped. A
// conversation that is neither a running child of the project nor listed
// as one is not_found.
func (s *Service) Stop(ctx context.Context, req StopRequest) (StopReply, error) {
	project, conv := req.Project, req.Conversation
	reply := StopReply{Project: project, Conversation: conv}
	if project == "" {
		return reply, bus.Errorf(bus.ReasonInvalidRequest, `request names no project: send {"project":"<project-id>","conversation":"<conversation-id>"} (project ls lists them)`)
	}
	if conv == "" {
		return reply, bus.Errorf(bus.ReasonInvalidRequest, `request names no conversation: send {"project":%q,"conversation":"<conversation-id>"} (conv ls --project %s lists them)`, project, project)
	}
	if !s.projects.Has(project) {
		return reply, bus.Errorf(bus.ReasonNotFound, "no project %q is open; list them with project ls", project)
	}
	if err := conversation.ValidateID(conv); err != nil {
		return reply, err
	}
	if err := checkWorktreeHow(req.Worktree); err != nil {
		return reply, err
	}
	reason := req.Reason
	if reason == "" {
		reason = "stopped"
	}
	key := project + "/" + conv
	running := slices.Contains(s.children(project), key)
	listed := slices.Contains(s.projects.Conversations(project), conv)
	if !running && !listed {
		// Stopped already, with its worktree kept: removing it later is
		// the one thing left to do.
		if req.Worktree == WorktreeRemove {
			if wt, err := s.endWorktree(ctx, project, conv, req.Worktree); err != nil || wt != nil {
				reply.Worktree = wt
				return reply, err
			}
		}
		return reply, bus.Errorf(bus.ReasonNotFound, "project %s has no conversation %q running; list them with conv ls --project %s", project, conv, project)
	}
	if running {
		if err := s.rt.Stop(ctx, key, reason); err != nil && bus.ErrorType(err) != bus.ReasonNotFound {
			return reply, fmt.Errorf("stop conversation %s: %w", key, err)
		}
	}
	// A conversation listed but gone (stopped by other means) is taken
	// off the list the same way.
	if err := s.projects.ConversationStopped(ctx, project, conv, reason); err != nil {
		return reply, fmt.Errorf("record the stop in project %s: %w", project, err)
	}
	s.logger.Info("conversation stopped", "project", project, "conversation", key, "reason", reason)
	wt, err := s.endWorktree(ctx, project, conv, req.Worktree)
	if err != nil {
		return reply, fmt.Errorf("conversation %s stopped; its worktree: %w", key, err)
	}
	reply.Worktree = wt
	return reply, nil
}

// children returns the agent ids of project's conversations: the
// runtime's children of its agent and, delegated, theirs, sorted.
func (s *Service) children(project string) []string {
	var ids []string
	next := []string{project}
	for len(next) > 0 && len(ids) < maxConversationTree {
		info, err := s.rt.State(next[0])
		next = next[1:]
		if err != nil {
			continue
		}
		for id := range maps.Values(info.Children) {
			ids = append(ids, id)
			next = append(next, id)
		}
	}
	return conversation.Under(project, slices.Values(ids))
}

// maxConversationTree bounds the walk of a project's conversations and
// their delegated children (depth and fan-out bound each tree).
const maxConversationTree = 100_000

func (s *Service) info(project, conv, key string) Info {
	in := Info{Project: project, Conversation: conv, ID: key, Stream: conversation.Stream(key), Status: runtime.StatusRunning}
	if info, err := s.rt.State(key); err == nil {
		in.Status = info.Status
	}
	return in
}

// neverStarted fails when conversation key's stream exists: its id has
// been used, by a conversation running or one that has stopped. (The
// runtime's Start does not tell a stopped agent's id from a new one: the
// start record it writes is the first one's repeat, so the log's
// idempotency passes over it.)
func (s *Service) neverStarted(key string) error {
	stream := conversation.Stream(key)
	if _, err := s.log.Stream(stream); err == nil {
		return fmt.Errorf("conversation %s has been used: its stream %s has entries", key, stream)
	}
	return nil
}

// cut splits a conversation key into its project and conversation ids.
func cut(key string) (project, conv string, ok bool) { return strings.Cut(key, "/") }
