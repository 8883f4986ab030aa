package projectionapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/conversation"
	"github.com/jido-bus/jido-bus/conversation/views"
	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/jido-bus/jido-bus/projections"
)

// Local runs the operations in this process. Runner must hold the
// conversation read models (views.Projections) for the conv verbs.
// It is safe for concurrent use, as the Runner and the Log are.
type Local struct {
	Runner *projections.Runner
	Log    *eventlog.Log
	// Append makes a fork a live conversation: it starts the agent of the
	// new conversation conv and hands it events, the fork's history, in
	// order (the node's does). It fails with an error of type
	// already_exists, or wrapping eventlog.ErrWrongVersion, when conv is
	// taken. Nil refuses forks (type unavailable): events appended with
	// no agent would make a conversation nothing can continue, and whose
	// id no agent could take.
	Append func(ctx context.Context, conv string, events []bus.Signal) (eventlog.AppendResult, error)
	// Now gives the time of events a fork makes. Nil means time.Now.
	Now func() time.Time
}

// List returns every projection's status.
func (c Local) List(context.Context, ListRequest) (ListReply, error) {
	return ListReply{Projections: c.Runner.Status()}, nil
}

// Get returns one key's state, current or at a past position.
func (c Local) Get(ctx context.Context, req GetRequest) (projections.State, error) {
	if req.Name == "" {
		return projections.State{}, bus.Errorf(bus.ReasonInvalidRequest, "get needs a projection name")
	}
	if req.At != (projections.Until{}) {
		return wrap(c.Runner.At(ctx, req.Name, req.Key, req.At))
	}
	return wrap(c.Runner.Get(req.Name, req.Key))
}

// Rebuild requests a rebuild.
func (c Local) Rebuild(_ context.Context, req RebuildRequest) (RebuildReply, error) {
	if err := c.Runner.Rebuild(req.Name); err != nil {
		return RebuildReply{}, asNotFound(err)
	}
	for _, st := range c.Runner.Status() {
		if st.Name == req.Name {
			return RebuildReply{Status: st}, nil
		}
	}
	return RebuildReply{}, nil
}

// replyReserve is the part of MaxReplyBytes kept for a conv.ls reply's
// envelope and its Next key (at most a stream name's 1 KiB).
const replyReserve = 4 << 10

// ConvList lists conversations with their status.
func (c Local) ConvList(_ context.Context, req ConvListRequest) (ConvListReply, error) {
	limit := req.Limit
	switch {
	case limit < 0:
		return ConvListReply{}, bus.Errorf(bus.ReasonInvalidRequest, "limit %d: want 0 (a page of %d) up to %d", limit, DefaultPageSize, MaxPageSize)
	case limit == 0:
		limit = DefaultPageSize
	}
	// Bounded, so that limit+1 below cannot overflow.
	limit = min(limit, MaxPageSize)
	prefix := ""
	if req.Project != "" {
		prefix = req.Project + "/"
	}
	keys, err := c.Runner.Keys(views.ViewStatus, prefix, req.After, limit+1)
	if err != nil {
		return ConvListReply{}, asNotFound(err)
	}
	reply := ConvListReply{Conversations: []ConvSummary{}}
	if len(keys) > limit {
		keys = keys[:limit]
		reply.Next = keys[limit-1]
	}
	size := 0
	for i, key := range keys {
		st, err := c.Runner.Get(views.ViewStatus, key)
		if err != nil {
			return ConvListReply{}, asNotFound(err)
		}
		var s views.Status
		if err := json.Unmarshal(st.State, &s); err != nil {
			return ConvListReply{}, fmt.Errorf("status of %s: %w", key, err)
		}
		sum := ConvSummary{Conv: key, State: s.State, PendingTools: len(s.PendingTools), LastSeq: s.LastSeq, UpdatedAt: s.UpdatedAt}
		if s.Parent != nil {
			sum.Parent = fmt.Sprintf("%s@%d", s.Parent.Conversation, s.Parent.Seq)
		}
		body, err := json.Marshal(sum)
		if err != nil {
			return ConvListReply{}, fmt.Errorf("encode the summary of %s: %w", key, err)
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

// ConvShow returns one read model of a conversation.
func (c Local) ConvShow(ctx context.Context, req ConvShowRequest) (ConvShowReply, error) {
	if err := conversation.CheckKey(req.Conv); err != nil {
		return ConvShowReply{}, bus.Errorf(bus.ReasonInvalidRequest, "%v", err)
	}
	view := req.View
	if view == "" {
		view = views.ViewTimeline
	}
	if _, ok := c.Runner.Definition(view); !ok {
		return ConvShowReply{}, bus.Errorf(bus.ReasonInvalidRequest, "unknown view %q; want timeline, llm_context, status or diagnostics", view)
	}
	var (
		st  projections.State
		err error
	)
	if req.Seq > 0 {
		if err := c.checkSeq(req.Conv, req.Seq); err != nil {
			return ConvShowReply{}, err
		}
		st, err = c.Runner.At(ctx, view, req.Conv, projections.Until{Seq: req.Seq})
	} else {
		st, err = c.Runner.Get(view, req.Conv)
		if errors.Is(err, projections.ErrNotFound) {
			return ConvShowReply{}, bus.Errorf(bus.ReasonNotFound, "no conversation %s: its stream %s holds no conversation event (yet); jido-bus conv ls lists the conversations", req.Conv, conversation.Stream(req.Conv))
		}
	}
	if err != nil {
		return ConvShowReply{}, asNotFound(err)
	}
	return ConvShowReply{Conv: req.Conv, View: view, Position: st.Position, State: st.State}, nil
}

// checkSeq refuses a sequence past the end of conversation conv: the
// model "as of" a sequence not yet written is not the model at the end,
// and pretending so would hide a typo (replay --to answers the same way).
func (c Local) checkSeq(conv string, seq uint64) error {
	if c.Log == nil {
		return nil
	}
	info, err := c.Log.Stream(conversation.Stream(conv))
	if err != nil || seq <= info.Head {
		return nil // a missing stream is reported as before, by the fold
	}
	return bus.Errorf(bus.ReasonInvalidRequest, "seq %d is past the end of %s, seq %d (the last event of %s); ask for %d or less", seq, conv, info.Head, conversation.Stream(conv), info.Head)
}

// ConvFork forks a conversation (views.Fork) and appends the new
// conversation's events.
func (c Local) ConvFork(ctx context.Context, req ConvForkRequest) (ConvForkReply, error) {
	if err := conversation.CheckKey(req.Conv); err != nil {
		return ConvForkReply{}, bus.Errorf(bus.ReasonInvalidRequest, "%v", err)
	}
	if req.Seq == 0 {
		return ConvForkReply{}, bus.Errorf(bus.ReasonInvalidRequest, "fork needs the sequence to fork at (--at)")
	}
	as := req.As
	if as == "" {
		as = fmt.Sprintf("%s-fork-%d", req.Conv, req.Seq)
	}
	if c.Append == nil {
		return ConvForkReply{}, bus.Errorf(bus.ReasonUnavailable, "fork of %s: a fork is a live conversation, and starting its agent needs a running node (jido-bus serve); ask it with --nats-url", req.Conv)
	}
	var entries []eventlog.Entry
	for e, err := range c.Log.ReadStream(conversation.Stream(req.Conv), eventlog.ReadOptions{}) {
		if err != nil {
			return ConvForkReply{}, asNotFound(fmt.Errorf("conversation %s: %w", req.Conv, err))
		}
		if e.Seq > req.Seq {
			break
		}
		entries = append(entries, e)
	}
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	events, err := views.Fork(req.Conv, entries, req.Seq, as, now().UTC())
	if err != nil {
		return ConvForkReply{}, bus.Errorf(bus.ReasonInvalidRequest, "%v", err)
	}
	res, err := c.Append(ctx, as, events)
	if errors.Is(err, eventlog.ErrWrongVersion) || bus.ErrorType(err) == reasonAlreadyExists {
		return ConvForkReply{}, bus.Errorf("conflict", "conversation %s already exists; choose another id with --as", as)
	}
	if err != nil {
		return ConvForkReply{}, err
	}
	return ConvForkReply{Conv: as, Stream: conversation.Stream(as), Events: len(events), Version: res.Version}, nil
}

// reasonAlreadyExists is the runtime's error type for an agent id that is
// taken (runtime.ReasonAlreadyExists, which this package may not import).
const reasonAlreadyExists = "already_exists"

func wrap(st projections.State, err error) (projections.State, error) {
	return st, asNotFound(err)
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
