package a2a

import (
	"encoding/json"
	"strings"

	sdk "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/jido-bus/jido-bus/conversation"
	"github.com/jido-bus/jido-bus/conversation/views"
)

// A stream must leave a client that applies A2A's artifact updates (an
// update without append adds the artifact or replaces the one of its id;
// one with append adds its parts to it: the JS, Python and Go SDKs' task
// managers) holding exactly the artifacts tasks/get returns. So each
// answer of the model is an artifact of its own (a turn's steps do not
// share one), streamed as it is written: its first delta creates it,
// each next delta is appended, and once the answer is in the log the
// rest of its text is appended with lastChunk. Deltas are a live
// preview published beside the commits, never logged, and some may be
// missed (a client that subscribes mid-answer, a full buffer, or NATS
// delivering one after the logged answer); the streamer then appends
// nothing more to that artifact and, at the logged answer, replaces it
// whole, which is always the text tasks/get returns.

// toolCall is the data part of a tool call's status update.
type toolCall struct {
	CallID string          `json:"call_id"`
	Name   string          `json:"name,omitempty"`
	State  string          `json:"state"`
	Args   json.RawMessage `json:"args,omitempty"`
	Error  string          `json:"error,omitempty"`
}

// streamer turns the events of one task into the A2A events a stream
// sends: tool calls as working status updates with the call as data,
// each answer of the model as an artifact written as it streams, the
// text the model writes before calling tools as a working status update
// with it as message (it is in the task's history), and a status update
// whenever the task's state changes (the completed one with the answer).
type streamer struct {
	taskID, contextID string
	last              sdk.TaskState
	// steps are the answers streamed, by artifact id.
	steps map[sdk.ArtifactID]*step
}

// step is what the client holds of one answer's artifact.
type step struct {
	// request is the LLM call whose deltas the client holds; next is the
	// index of the delta that continues them.
	request string
	next    int
	// sent is the text the client holds (held: it holds the artifact).
	sent string
	held bool
	// gap: a delta was missed, so the client's text stays sent until the
	// logged answer replaces it.
	gap bool
}

func newStreamer(t *task, conv string, last sdk.TaskState) *streamer {
	return &streamer{taskID: t.id, contextID: conv, last: last, steps: map[sdk.ArtifactID]*step{}}
}

func (s *streamer) info() sdk.TaskInfo {
	return sdk.TaskInfo{TaskID: sdk.TaskID(s.taskID), ContextID: s.contextID}
}

// events returns the A2A events for ev, which f has folded into task t.
func (s *streamer) events(f *contextFold, t *task, ev *views.Event) []sdk.Event {
	var out []sdk.Event
	d := &ev.Data
	switch ev.Type {
	case conversation.AssistantDelta:
		if e := s.delta(f, t, ev); e != nil {
			out = append(out, e)
		}
	case conversation.AssistantMessage:
		if d.Text == "" {
			break
		}
		if e := s.answered(ev); e != nil {
			out = append(out, e)
		}
		if d.ToolCalls > 0 {
			// What the model says before it calls tools goes to the
			// task's history, where a status message goes.
			m := message(sdk.MessageRoleAgent, ev)
			m.TaskID, m.ContextID = sdk.TaskID(s.taskID), s.contextID
			out = append(out, sdk.NewStatusUpdateEvent(s.info(), f.state(t), m))
		}
	case conversation.ToolRequested, conversation.ToolStarted, conversation.ToolCompleted, conversation.ToolFailed,
		conversation.ToolCancelled, conversation.ToolTimeout, conversation.ToolApprovalRequested:
		tc := toolCall{CallID: d.CallID, Name: f.toolNames[d.CallID], State: ev.Type[len("conversation.tool."):], Args: d.Args}
		if d.Error != nil {
			tc.Error = d.Error.Type + ": " + d.Error.Message
		}
		m := sdk.NewMessageForTask(sdk.MessageRoleAgent, s.info(), sdk.NewDataPart(map[string]any{"tool_call": tc}))
		m.ID = ev.ID
		state := f.state(t)
		out = append(out, sdk.NewStatusUpdateEvent(s.info(), state, m))
		s.last = state
		return out
	}
	if state := f.state(t); state != s.last && ev.Seq != 0 {
		out = append(out, sdk.NewStatusUpdateEvent(s.info(), state, f.statusMessage(t)))
		s.last = state
	}
	return out
}

// delta is the artifact update of one delta, or nil when the client is
// not to see it: its answer is logged already (the logged text is sent
// whole), it belongs to no turn of this task, or it does not continue
// what the client holds (the logged answer will replace it).
func (s *streamer) delta(f *contextFold, t *task, ev *views.Event) sdk.Event {
	d := &ev.Data
	id := stepArtifactID(ev.CausationID, ev.ID)
	if ev.Seq != 0 || d.Text == "" || t.end != nil || f.steps[string(id)] || !t.users[turnOf(ev.CausationID)] {
		return nil
	}
	if before, ok := stepBefore(ev.CausationID); ok && !f.steps[string(before)] {
		// A delta of the next answer that came before the answer it
		// follows was folded: its artifact would come first.
		return nil
	}
	st := s.steps[id]
	if st == nil {
		st = &step{}
		s.steps[id] = st
	}
	switch {
	case ev.CausationID != st.request && d.Index == 0:
		// The first delta of an attempt: it creates the artifact, or
		// replaces what an attempt before it streamed.
		st.request, st.next, st.sent, st.held, st.gap = ev.CausationID, 1, d.Text, true, false
		e := sdk.NewArtifactUpdateEvent(s.info(), id, sdk.NewTextPart(d.Text))
		e.Append = false
		return e
	case ev.CausationID == st.request && d.Index == st.next && !st.gap:
		st.next++
		st.sent += d.Text
		return sdk.NewArtifactUpdateEvent(s.info(), id, sdk.NewTextPart(d.Text))
	}
	st.request, st.gap = ev.CausationID, true
	return nil
}

// answered is the last update of an answer's artifact once the answer is
// logged: the rest of its text appended to what the client holds, or
// the whole text in place of it.
func (s *streamer) answered(ev *views.Event) sdk.Event {
	text := ev.Data.Text
	id := stepArtifactID(ev.CausationID, ev.ID)
	st := s.steps[id]
	if st == nil {
		st = &step{}
		s.steps[id] = st
	}
	holds := st.held && st.request == ev.CausationID
	st.request, st.held, st.gap = ev.CausationID, true, true
	switch {
	case holds && text == st.sent:
		// The client holds the whole text already; an update without
		// text is refused by some clients, so the last delta stays the
		// last chunk.
		return nil
	case holds && strings.HasPrefix(text, st.sent):
		e := sdk.NewArtifactUpdateEvent(s.info(), id, sdk.NewTextPart(text[len(st.sent):]))
		e.LastChunk = true
		st.sent = text
		return e
	}
	e := sdk.NewArtifactUpdateEvent(s.info(), id, sdk.NewTextPart(text))
	e.Append, e.LastChunk = false, true
	st.sent = text
	return e
}
