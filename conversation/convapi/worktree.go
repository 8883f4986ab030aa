package convapi

import (
	"context"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/conversation"
)

// What conv.stop does with a conversation's worktree (StopRequest.Worktree).
const (
	WorktreeKeep   = "keep"
	WorktreeRemove = "remove"
)

// Worktrees is what the node's project engine does for the conversations
// that work in their own git worktree (projects/worktree.go). A Projects
// without it refuses a start that asks for one.
type Worktrees interface {
	// StartWorktree makes conversation conv's worktree in project id
	// when asked or when the project's settings want one for every
	// conversation; nil when neither.
	StartWorktree(ctx context.Context, id, conv string, asked bool) (*conversation.Worktree, error)
	// EndWorktree keeps or removes the worktree of conv, stopped; nil
	// when it has none.
	EndWorktree(ctx context.Context, id, conv string, remove bool) (*conversation.WorktreeEnd, error)
}

// startWorktree is the worktree conversation conv of req.Project starts
// in, or nil.
func (s *Service) startWorktree(ctx context.Context, conv string, req StartRequest) (*conversation.Worktree, error) {
	w, ok := s.projects.(Worktrees)
	if !ok {
		if req.Worktree {
			return nil, bus.Errorf(bus.ReasonUnavailable, "this node cannot give a conversation its own worktree; start it without worktree")
		}
		return nil, nil
	}
	return w.StartWorktree(ctx, req.Project, conv, req.Worktree)
}

// endWorktree keeps or removes (how) the worktree of the stopped
// conversation conv of project.
func (s *Service) endWorktree(ctx context.Context, project, conv, how string) (*conversation.WorktreeEnd, error) {
	w, ok := s.projects.(Worktrees)
	if !ok {
		return nil, nil
	}
	return w.EndWorktree(ctx, project, conv, how == WorktreeRemove)
}

// checkWorktreeHow refuses a conv.stop worktree member other than keep
// or remove.
func checkWorktreeHow(how string) error {
	switch how {
	case "", WorktreeKeep, WorktreeRemove:
		return nil
	}
	return bus.Errorf(bus.ReasonInvalidRequest, "worktree %q: want %q or %q (what becomes of the conversation's git worktree)", how, WorktreeKeep, WorktreeRemove)
}

// dropWorktree removes wt, the worktree of a conversation that failed to
// start, so that nothing is left of it but its used id.
func (s *Service) dropWorktree(ctx context.Context, key, project, conv string, wt *conversation.Worktree) {
	if wt == nil {
		return
	}
	if _, err := s.endWorktree(context.WithoutCancel(ctx), project, conv, WorktreeRemove); err != nil {
		s.logger.Error("remove the worktree of a conversation that failed to start", "conversation", key, "path", wt.Path, "err", err)
	}
}
