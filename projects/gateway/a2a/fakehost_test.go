package a2agw

import (
	"context"
	"encoding/json"
	"iter"
	"strings"
	"sync"
	"time"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/projections/conversation"
	"github.com/jido-bus/jido-bus/projections/conversation/convevent"
	"github.com/jido-bus/jido-bus/projects/gateway"
)

// fakeHost is a Host whose conversations live in memory and whose
// "assistant" plays a fixed turn for every user message: a read_file
// tool call, then the answer; a message containing "hold" leaves the turn
// waiting for the model, so it can be cancelled.
type fakeHost struct {
	mu      sync.Mutex
	changed chan struct{} // closed and replaced on every append
	convs   map[string][]*conversation.Event
	records []gateway.Request
	project string
}

func newFakeHost(project string) *fakeHost {
	return &fakeHost{changed: make(chan struct{}), convs: map[string][]*conversation.Event{}, project: project}
}

func (h *fakeHost) Project(_ context.Context, id string) (Project, error) {
	if id != h.project {
		return Project{}, bus.Errorf(bus.ReasonNotFound, "project %s is not open", id)
	}
	return Project{ID: id, Description: "a test project", Skills: []Skill{{ID: "command.review", Name: "review", Description: "review a file", Tags: []string{"command"}}}}, nil
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

// appendLocked appends an event of type typ to key; h.mu is held.
func (h *fakeHost) appendLocked(key, typ string, d convevent.Data) uint64 {
	seq := uint64(len(h.convs[key]) + 1)
	h.convs[key] = append(h.convs[key], &conversation.Event{Type: typ, ID: bus.NewID(), Seq: seq, Time: time.Now().UTC(), Data: d})
	close(h.changed)
	h.changed = make(chan struct{})
	return seq
}

func (h *fakeHost) StartConversation(_ context.Context, project, conv, owner string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	key := project + "/" + conv
	if len(h.convs[key]) > 0 {
		return bus.Errorf("already_exists", "conversation %s exists", key)
	}
	h.appendLocked(key, convevent.Started, convevent.Data{ProjectID: project, ConversationID: conv, Assistant: true, By: owner})
	return nil
}

func (h *fakeHost) SendMessage(_ context.Context, key, text string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.convs[key]) == 0 {
		return bus.Errorf(bus.ReasonNotFound, "conversation %s is not running", key)
	}
	h.appendLocked(key, convevent.UserMessage, convevent.Data{Text: text})
	h.appendLocked(key, convevent.LLMRequested, convevent.Data{Step: 1})
	if strings.Contains(text, "hold") {
		return nil
	}
	// The rest of the turn plays out after the reply, as the loop does.
	go h.play(key)
	return nil
}

func (h *fakeHost) play(key string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.appendLocked(key, convevent.AssistantMessage, convevent.Data{ToolCalls: 1})
	h.appendLocked(key, convevent.ToolRequested, convevent.Data{CallID: "t1", Name: "read_file", Args: json.RawMessage(`{"path":"a.txt"}`)})
	h.appendLocked(key, convevent.LLMCompleted, convevent.Data{})
	h.appendLocked(key, convevent.ToolStarted, convevent.Data{CallID: "t1"})
	h.appendLocked(key, convevent.ToolCompleted, convevent.Data{CallID: "t1", Output: json.RawMessage(`{"content":"hello"}`)})
	h.appendLocked(key, convevent.LLMRequested, convevent.Data{Step: 2})
	h.appendLocked(key, convevent.AssistantMessage, convevent.Data{Text: "a.txt says hello"})
	h.appendLocked(key, convevent.LLMCompleted, convevent.Data{})
}

func (h *fakeHost) CancelConversation(_ context.Context, key, _ string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.convs[key]) == 0 {
		return bus.Errorf(bus.ReasonNotFound, "conversation %s is not running", key)
	}
	h.appendLocked(key, convevent.Cancel, convevent.Data{})
	return nil
}

func (h *fakeHost) ConversationEvents(_ context.Context, key string) ([]*conversation.Event, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]*conversation.Event(nil), h.convs[key]...), nil
}

func (h *fakeHost) FollowConversation(ctx context.Context, key string, after uint64) iter.Seq2[*conversation.Event, error] {
	return func(yield func(*conversation.Event, error) bool) {
		for {
			h.mu.Lock()
			evs, changed := h.convs[key], h.changed
			h.mu.Unlock()
			for _, ev := range evs {
				if ev.Seq > after {
					after = ev.Seq
					if !yield(ev, nil) {
						return
					}
				}
			}
			select {
			case <-ctx.Done():
				return
			case <-changed:
			}
		}
	}
}
