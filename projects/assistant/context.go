package assistant

import (
	"container/list"
	"slices"
	"sync"

	"github.com/jido-bus/jido-bus/conversation"
	"github.com/jido-bus/jido-bus/conversation/views"
	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/jido-bus/jido-bus/projections"
)

// contexts keeps the llm_context read model of the conversations that
// talk now, folded incrementally: each LLM call folds only the entries
// committed since the last one, instead of the whole conversation, which
// would make a long conversation quadratic. The fold is the projection's
// own, so the messages are exactly the read model's.
type contexts struct {
	log  *eventlog.Log
	proj views.LLMContextProjection
	max  int

	mu    sync.Mutex
	byKey map[string]*list.Element
	lru   *list.List // of *folded, most recent first
}

type folded struct {
	key string
	mu  sync.Mutex // one fold of a conversation at a time
	ctx *views.LLMContext
	seq uint64 // the stream sequence folded up to
	// calls are the tool call ids the whole conversation has used (not
	// only the window's): a model may repeat one, and a repeated id would
	// make the call's events duplicates the log drops.
	calls map[string]bool
	// turns are the stream sequences of the user messages, by event id:
	// a turn's repair forks the conversation just before its message.
	turns map[string]uint64
}

// history is what an LLM call takes from its conversation's log.
type history struct {
	// msgs are the messages to send, in a provider's order.
	msgs []views.Message
	// list is llm_context's own list (a copy), in which a compaction
	// chooses what to replace; tokens its estimate and dropped the
	// messages the last-resort guard has dropped so far.
	list    []views.Message
	tokens  int
	dropped int
	// used reports whether the conversation has used a tool call id.
	used func(string) bool
	// before is the stream sequence just before user message turn (the
	// --at of a fork that leaves the turn out), 0 when it is unknown.
	before func(turn string) uint64
}

func newContexts(log *eventlog.Log, max int) *contexts {
	return &contexts{log: log, max: max, byKey: map[string]*list.Element{}, lru: list.New()}
}

// get returns what the next LLM call of conversation key takes from its
// log: the messages to send — its llm_context as of everything committed
// to its stream now, in the order providers require whatever order the
// log holds (an older node logged a user message between tool calls and
// their results, which every later request then carried) — and what it
// needs to name ids and a repair.
func (c *contexts) get(key string) (history, error) {
	f := c.entry(key)
	f.mu.Lock()
	defer f.mu.Unlock()
	for e, err := range c.log.ReadStream(conversation.Stream(key), eventlog.ReadOptions{From: f.seq + 1}) {
		if err != nil {
			return history{}, err
		}
		f.seq = e.Seq
		entry := projections.NewEntry(e)
		f.ctx = c.proj.Apply(f.ctx, entry)
		switch e.Event.Type() {
		case conversation.ToolRequested:
			if ev := views.Decode(e); ev != nil && ev.Data.CallID != "" {
				f.calls[ev.Data.CallID] = true
			}
		case conversation.UserMessage:
			f.turns[e.Event.ID()] = e.Seq
		}
	}
	h := history{msgs: f.ctx.Request(), list: slices.Clone(f.ctx.Messages), tokens: f.ctx.Tokens, dropped: f.ctx.Dropped}
	h.used = func(id string) bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return f.calls[id]
	}
	h.before = func(turn string) uint64 {
		f.mu.Lock()
		defer f.mu.Unlock()
		if seq := f.turns[turn]; seq > 1 {
			return seq - 1
		}
		return 0
	}
	return h, nil
}

func (c *contexts) entry(key string) *folded {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byKey[key]; ok {
		c.lru.MoveToFront(el)
		return el.Value.(*folded)
	}
	f := &folded{key: key, ctx: c.proj.Init(), calls: map[string]bool{}, turns: map[string]uint64{}}
	c.byKey[key] = c.lru.PushFront(f)
	for c.lru.Len() > c.max {
		last := c.lru.Back()
		c.lru.Remove(last)
		delete(c.byKey, last.Value.(*folded).key)
	}
	return f
}

// Context returns the messages the next LLM call of conversation key
// would be given (its llm_context as committed now).
func (a *Assistant) Context(key string) ([]views.Message, error) {
	h, err := a.ctxs.get(key)
	return h.msgs, err
}
