package assistant

import (
	"container/list"
	"sync"

	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/jido-bus/jido-bus/projections"
	"github.com/jido-bus/jido-bus/projections/conversation"
	"github.com/jido-bus/jido-bus/projections/conversation/convevent"
)

// contexts keeps the llm_context read model of the conversations that
// talk now, folded incrementally: each LLM call folds only the entries
// committed since the last one, instead of the whole conversation, which
// would make a long conversation quadratic. The fold is the projection's
// own, so the messages are exactly the read model's.
type contexts struct {
	log  *eventlog.Log
	proj conversation.LLMContextProjection
	max  int

	mu    sync.Mutex
	byKey map[string]*list.Element
	lru   *list.List // of *folded, most recent first
}

type folded struct {
	key string
	mu  sync.Mutex // one fold of a conversation at a time
	ctx *conversation.LLMContext
	seq uint64 // the stream sequence folded up to
	// calls are the tool call ids the whole conversation has used (not
	// only the window's): a model may repeat one, and a repeated id would
	// make the call's events duplicates the log drops.
	calls map[string]bool
}

func newContexts(log *eventlog.Log, max int) *contexts {
	return &contexts{log: log, max: max, byKey: map[string]*list.Element{}, lru: list.New()}
}

// get returns a copy of the messages of conversation key's llm_context as
// of everything committed to its stream now, and a function that reports
// whether the conversation has used a tool call id.
func (c *contexts) get(key string) ([]conversation.Message, func(string) bool, error) {
	f := c.entry(key)
	f.mu.Lock()
	defer f.mu.Unlock()
	for e, err := range c.log.ReadStream(convevent.Stream(key), eventlog.ReadOptions{From: f.seq + 1}) {
		if err != nil {
			return nil, nil, err
		}
		f.seq = e.Seq
		entry := projections.NewEntry(e)
		f.ctx = c.proj.Apply(f.ctx, entry)
		if e.Event.Type() == convevent.ToolRequested {
			if ev := conversation.Decode(e); ev != nil && ev.Data.CallID != "" {
				f.calls[ev.Data.CallID] = true
			}
		}
	}
	out := make([]conversation.Message, len(f.ctx.Messages))
	copy(out, f.ctx.Messages)
	used := func(id string) bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return f.calls[id]
	}
	return out, used, nil
}

func (c *contexts) entry(key string) *folded {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byKey[key]; ok {
		c.lru.MoveToFront(el)
		return el.Value.(*folded)
	}
	f := &folded{key: key, ctx: c.proj.Init(), calls: map[string]bool{}}
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
func (a *Assistant) Context(key string) ([]conversation.Message, error) {
	msgs, _, err := a.ctxs.get(key)
	return msgs, err
}
