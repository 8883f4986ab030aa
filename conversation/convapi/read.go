package convapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/conversation"
	"github.com/jido-bus/jido-bus/conversation/views"
	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/jido-bus/jido-bus/projections"
)

// Reader reads the conversations' read models: conv.ls and conv.show. It
// needs no runtime, so `jido-bus conv ls|show` read a data dir with it
// when no node runs. Runner must hold the read models (views.Projections).
// It is safe for concurrent use, as the Runner and the Log are.
type Reader struct {
	Runner *projections.Runner
	Log    *eventlog.Log
}

// replyReserve is the part of MaxReplyBytes kept for a conv.ls reply's
// envelope and its Next key (at most a stream name's 1 KiB).
const replyReserve = 4 << 10

// List lists conversations with their status, from the status read model
// (which follows the log in the background).
func (r Reader) List(_ context.Context, req ListRequest) (ListReply, error) {
	limit := req.Limit
	switch {
	case limit < 0:
		return ListReply{}, bus.Errorf(bus.ReasonInvalidRequest, "limit %d: want 0 (a page of %d) up to %d", limit, DefaultPageSize, MaxPageSize)
	case limit == 0:
		limit = DefaultPageSize
	}
	// Bounded, so that limit+1 below cannot overflow.
	limit = min(limit, MaxPageSize)
	prefix := ""
	if req.Project != "" {
		prefix = req.Project + "/"
	}
	keys, err := r.Runner.Keys(views.ViewStatus, prefix, req.After, limit+1)
	if err != nil {
		return ListReply{}, asNotFound(err)
	}
	reply := ListReply{Conversations: []Summary{}}
	if len(keys) > limit {
		keys = keys[:limit]
		reply.Next = keys[limit-1]
	}
	size := 0
	for i, key := range keys {
		st, err := r.Runner.Get(views.ViewStatus, key)
		if err != nil {
			return ListReply{}, asNotFound(err)
		}
		var s views.Status
		if err := json.Unmarshal(st.State, &s); err != nil {
			return ListReply{}, fmt.Errorf("status of %s: %w", key, err)
		}
		sum := Summary{Conv: key, State: s.State, PendingTools: len(s.PendingTools), LastSeq: s.LastSeq, UpdatedAt: s.UpdatedAt,
			TokensIn: s.Usage.InputTokens, TokensOut: s.Usage.OutputTokens, CostUSD: s.CostUSD}
		if s.Worktree != nil {
			sum.Branch = s.Worktree.Branch
		}
		if s.Parent != nil {
			sum.Parent = fmt.Sprintf("%s@%d", s.Parent.Conversation, s.Parent.Seq)
		}
		if s.Delegated != nil {
			sum.DelegatedBy = s.Delegated.Conversation
		}
		body, err := json.Marshal(sum)
		if err != nil {
			return ListReply{}, fmt.Errorf("encode the summary of %s: %w", key, err)
		}
		// The page ends before the reply would pass MaxReplyBytes, well
		// within NATS's max payload (a reply too large is never sent);
		// replyReserve keeps room for the envelope and Next.
		if size += len(body) + 1; size > MaxReplyBytes-replyReserve && i > 0 {
			reply.Next = keys[i-1]
			break
		}
		reply.Conversations = append(reply.Conversations, sum)
	}
	return reply, nil
}

// Show returns one read model of a conversation.
func (r Reader) Show(ctx context.Context, req ShowRequest) (ShowReply, error) {
	if err := conversation.CheckKey(req.Conv); err != nil {
		return ShowReply{}, bus.Errorf(bus.ReasonInvalidRequest, "%v", err)
	}
	view := req.View
	if view == "" {
		view = views.ViewTimeline
	}
	if _, ok := r.Runner.Definition(view); !ok {
		return ShowReply{}, bus.Errorf(bus.ReasonInvalidRequest, "unknown view %q; want timeline, llm_context, status or diagnostics", view)
	}
	var (
		st  projections.State
		err error
	)
	if req.Seq > 0 {
		if err := r.checkSeq(req.Conv, req.Seq); err != nil {
			return ShowReply{}, err
		}
		st, err = r.Runner.At(ctx, view, req.Conv, projections.Until{Seq: req.Seq})
	} else {
		st, err = r.Runner.Get(view, req.Conv)
		if errors.Is(err, projections.ErrNotFound) {
			return ShowReply{}, bus.Errorf(bus.ReasonNotFound, "no conversation %s: its stream %s holds no conversation event (yet); jido-bus conv ls lists the conversations", req.Conv, conversation.Stream(req.Conv))
		}
	}
	if err != nil {
		return ShowReply{}, asNotFound(err)
	}
	return ShowReply{Conv: req.Conv, View: view, Position: st.Position, State: st.State}, nil
}

// Fork refuses a fork it would otherwise make: a fork is a live
// conversation, and starting its agent needs a running node
// (Service.Fork).
func (r Reader) Fork(_ context.Context, req ForkRequest) (ForkReply, error) {
	if _, err := checkFork(req); err != nil {
		return ForkReply{}, err
	}
	return ForkReply{}, bus.Errorf(bus.ReasonUnavailable, "fork of %s: a fork is a live conversation, and starting its agent needs a running node (jido-bus serve); ask it with --nats-url", req.Conv)
}

// checkSeq refuses a sequence past the end of conversation conv: the
// model "as of" a sequence not yet written is not the model at the end,
// and pretending so would hide a typo (replay --to answers the same way).
func (r Reader) checkSeq(conv string, seq uint64) error {
	if r.Log == nil {
		return nil
	}
	info, err := r.Log.Stream(conversation.Stream(conv))
	if err != nil || seq <= info.Head {
		return nil // a missing stream is reported as before, by the fold
	}
	return bus.Errorf(bus.ReasonInvalidRequest, "seq %d is past the end of %s, seq %d (the last event of %s); ask for %d or less", seq, conv, info.Head, conversation.Stream(conv), info.Head)
}

// asNotFound gives not-found errors the not_found type word for replies.
func asNotFound(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, projections.ErrNotFound) || errors.Is(err, eventlog.ErrNotFound) {
		return bus.Errorf(bus.ReasonNotFound, "%v", err)
	}
	return err
}
