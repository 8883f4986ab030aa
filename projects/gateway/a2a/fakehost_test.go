package a2a

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"strings"
	"sync"
	"time"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/conversation"
	"github.com/jido-bus/jido-bus/conversation/views"
	"github.com/jido-bus/jido-bus/projects/gateway"
)

// fakeHost is a Host whose conversations live in memory and whose
// "assistant" plays a fixed turn for every user message, as the loop
// does, with the loop's ids: the model says a sentence (streamed in
// deltas) and calls read_file, then writes the answer (streamed in
// deltas). A message containing "hold" leaves the turn waiting for the
// model, so it can be cancelled.
type fakeHost struct {
	mu      sync.Mutex
	changed chan struct{} // closed and replaced on every append
	convs   map[string][]*views.Event
	// timeline is every logged event and every delta of a conversation,
	// in the order they happened, for followers.
	timeline map[string][]*views.Event
	records  []gateway.Request
	project  string
}

// The texts the fake model writes, in deltas of fakeChunk bytes.
const (
	fakeStep   = "Let me read a.txt."
	fakeAnswer = "a.txt says hello"
	fakeChunk  = 5
)

func newFakeHost(project string) *fakeHost {
	return &fakeHost{changed: make(chan struct{}), convs: map[string][]*views.Event{}, timeline: map[string][]*views.Event{}, project: project}
}

func (h *fakeHost) Project(_ context.Context, id string) (Project, error) {
	if id != h.project {
		return Project{}, bus.Errorf(bus.ReasonNotFound, "project %s is not open", id)
	}
	return Project{ID: id, Description: "a test project", Skills: []Skill{{ID: "command_review", Name: "review", Description: "review a file", Tags: []string{"command"}}}}, nil
}

func (h *fakeHost) RecordGatewayRequest(_ context.Context, project string, r gateway.Request) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if project != h.project {
		return bus.Errorf(bus.ReasonNotFound, "project %s is not open", project)
	}
	h.records = append(h.records, r)
	return nil
}

func (h *fakeHost) recorded() []gateway.Request {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]gateway.Request(nil), h.records...)
}

// appendLocked logs an event of type typ to key; h.mu is held.
func (h *fakeHost) appendLocked(key, typ string, d conversation.Data) uint64 {
	return h.appendIDLocked(key, typ, bus.NewID(), "", d)
}

// appendIDLocked logs an event with its id and causation id; h.mu is held.
func (h *fakeHost) appendIDLocked(key, typ, id, causation string, d conversation.Data) uint64 {
	seq := uint64(len(h.convs[key]) + 1)
	ev := &views.Event{Type: typ, ID: id, CausationID: causation, Seq: seq, Time: time.Now().UTC(), Data: d}
	h.convs[key] = append(h.convs[key], ev)
	h.timeline[key] = append(h.timeline[key], ev)
	h.notifyLocked()
	return seq
}

// publishLocked publishes the deltas of text for LLM request req, as the
// executor does (never logged); h.mu is held.
func (h *fakeHost) publishLocked(key, req, text string) {
	for i := 0; len(text) > 0; i++ {
		n := min(fakeChunk, len(text))
		h.timeline[key] = append(h.timeline[key], &views.Event{Type: conversation.AssistantDelta, ID: fmt.Sprintf("%s.delta.%d", req, i), CausationID: req, Data: conversation.Data{Text: text[:n], Index: i}})
		text = text[n:]
	}
	h.notifyLocked()
}

func (h *fakeHost) notifyLocked() {
	close(h.changed)
	h.changed = make(chan struct{})
}

func (h *fakeHost) StartConversation(_ context.Context, project, conv, owner, mode string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	key := project + "/" + conv
	if len(h.convs[key]) > 0 {
		return bus.Errorf("already_exists", "conversation %s exists", key)
	}
	h.appendLocked(key, conversation.Started, conversation.Data{ProjectID: project, ConversationID: conv, Assistant: true, By: owner, Mode: mode})
	return nil
}

func (h *fakeHost) SendMessage(_ context.Context, key, text string) (string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.convs[key]) == 0 {
		return "", bus.Errorf(bus.ReasonNotFound, "conversation %s is not running", key)
	}
	id := bus.NewID()
	h.appendIDLocked(key, conversation.UserMessage, id, id, conversation.Data{Text: text})
	req := "llm." + id + ".1.1"
	h.appendIDLocked(key, conversation.LLMRequested, req, id, conversation.Data{Step: 1, Attempt: 1})
	if strings.Contains(text, "hold") {
		return id, nil
	}
	// The rest of the turn plays out after the reply, as the loop does.
	go h.play(key, id)
	return id, nil
}

// play plays the rest of the turn of user message id.
func (h *fakeHost) play(key, id string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	req1, req2 := "llm."+id+".1.1", "llm."+id+".2.1"
	h.publishLocked(key, req1, fakeStep)
	h.appendIDLocked(key, conversation.AssistantMessage, req1+".message", req1, conversation.Data{Text: fakeStep, ToolCalls: 1})
	h.appendIDLocked(key, conversation.ToolRequested, req1+".call.1", req1, conversation.Data{CallID: "t1", Name: "read_file", Args: json.RawMessage(`{"path":"a.txt"}`)})
	h.appendIDLocked(key, conversation.LLMCompleted, req1+".completed", req1, conversation.Data{ToolCalls: 1})
	h.appendLocked(key, conversation.ToolStarted, conversation.Data{CallID: "t1"})
	h.appendLocked(key, conversation.ToolCompleted, conversation.Data{CallID: "t1", Output: json.RawMessage(`{"content":"hello"}`)})
	h.appendIDLocked(key, conversation.LLMRequested, req2, "t1", conversation.Data{Step: 2, Attempt: 1})
	h.publishLocked(key, req2, fakeAnswer)
	h.appendIDLocked(key, conversation.AssistantMessage, req2+".message", req2, conversation.Data{Text: fakeAnswer})
	h.appendIDLocked(key, conversation.LLMCompleted, req2+".completed", req2, conversation.Data{})
}

func (h *fakeHost) CancelConversation(_ context.Context, key, _ string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.convs[key]) == 0 {
		return bus.Errorf(bus.ReasonNotFound, "conversation %s is not running", key)
	}
	h.appendLocked(key, conversation.Cancel, conversation.Data{})
	return nil
}

func (h *fakeHost) ConversationEvents(_ context.Context, key string) ([]*views.Event, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]*views.Event(nil), h.convs[key]...), nil
}

// FollowConversation yields the logged events after after that were
// logged before the call, then what happens after the call, deltas
// included, in order.
func (h *fakeHost) FollowConversation(ctx context.Context, key string, after uint64) (iter.Seq2[*views.Event, error], error) {
	h.mu.Lock()
	from := len(h.timeline[key])
	var backlog []*views.Event
	for _, ev := range h.convs[key] {
		if ev.Seq > after {
			backlog = append(backlog, ev)
		}
	}
	h.mu.Unlock()
	return func(yield func(*views.Event, error) bool) {
		for _, ev := range backlog {
			if !yield(ev, nil) {
				return
			}
		}
		for {
			h.mu.Lock()
			evs, changed := h.timeline[key][from:], h.changed
			from += len(evs)
			h.mu.Unlock()
			for _, ev := range evs {
				if ev.Seq != 0 && ev.Seq <= after {
					continue
				}
				if !yield(ev, nil) {
					return
				}
			}
			select {
			case <-ctx.Done():
				return
			case <-changed:
			}
		}
	}, nil
}
