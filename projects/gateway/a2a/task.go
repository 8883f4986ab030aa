package a2agw

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/jido-bus/jido-bus/projections/conversation"
	"github.com/jido-bus/jido-bus/projections/conversation/convevent"
)

// turn folds a conversation's events into what an A2A task shows: the
// conversation's status read model (conversation.Status, the same fold
// the node's projection runs) plus where the latest turn stands. A task
// is a conversation (task id = conversation id = context id); its state
// is the state of the conversation's latest turn.
//
// It is rebuilt from the log on every request, so a task survives a node
// restart exactly as the conversation does: the gateway keeps nothing.
type turn struct {
	status *conversation.Status
	// user is the seq of the latest conversation.user.message, 0 before
	// any.
	user uint64
	// answered: a final assistant message (one asking for no tool) came
	// after the latest user message.
	answered bool
	// retrying: the last event is an llm.failed the loop retries, so the
	// failure is not the turn's end.
	retrying bool
	// failure is the error of the latest llm.failed of the turn.
	failure string
	// history is every user and final assistant message, in order.
	history []*a2a.Message
	// answers are the final assistant messages, one artifact each.
	answers []*a2a.Artifact
}

func newTurn() *turn { return &turn{status: conversation.NewStatus()} }

// fold applies one logged event (deltas carry no seq and change nothing).
func (t *turn) fold(taskID string, ev *conversation.Event) {
	if ev.Seq == 0 || ev.Invalid != "" {
		return
	}
	t.status.Fold(ev)
	d := &ev.Data
	t.retrying = false
	switch ev.Type {
	case convevent.UserMessage:
		t.user, t.answered, t.failure = ev.Seq, false, ""
		t.history = append(t.history, message(taskID, a2a.MessageRoleUser, ev))
	case convevent.AssistantMessage:
		if d.ToolCalls == 0 {
			t.answered = true
			t.history = append(t.history, message(taskID, a2a.MessageRoleAgent, ev))
			t.answers = append(t.answers, answer(t.user, d.Text))
		}
	case convevent.LLMFailed:
		// The loop makes the call again when the executor chose a delay
		// (retry_in_ms), and at once after an interruption (a restart).
		t.retrying = d.RetryInMS > 0 || d.Error != nil && d.Error.Type == convevent.ReasonInterrupted
		if d.Error != nil {
			t.failure = d.Error.Type + ": " + d.Error.Message
		}
	}
}

// state is the task's state: the status read model's, with idle read as
// the turn's end once it has an answer.
func (t *turn) state() a2a.TaskState {
	switch t.status.State {
	case conversation.StateCancelled:
		return a2a.TaskStateCanceled
	case conversation.StateFailed:
		if t.retrying {
			return a2a.TaskStateWorking
		}
		return a2a.TaskStateFailed
	case conversation.StateCompleted:
		return a2a.TaskStateCompleted
	case conversation.StateAwaitingApproval:
		return a2a.TaskStateInputRequired
	case conversation.StateAwaitingLLM, conversation.StateAwaitingTools:
		return a2a.TaskStateWorking
	}
	switch {
	case t.user == 0:
		return a2a.TaskStateSubmitted
	case t.answered:
		return a2a.TaskStateCompleted
	}
	// The user's message is in and the loop has not asked the model yet.
	return a2a.TaskStateWorking
}

// ended reports whether the turn has stopped moving on its own: a
// terminal state, or waiting for a person (input-required).
func (t *turn) ended() bool {
	s := t.state()
	return s.Terminal() || s == a2a.TaskStateInputRequired
}

// statusMessage says why the task is where it is, when that needs words.
func (t *turn) statusMessage(taskID string) *a2a.Message {
	var text string
	switch t.state() {
	case a2a.TaskStateFailed:
		text = t.failure
		if text == "" && t.status.Stopped != "" {
			text = "the conversation stopped: " + t.status.Stopped
		}
	case a2a.TaskStateInputRequired:
		for _, p := range t.status.PendingTools {
			if p.State == conversation.ToolAwaitingApproval {
				text = "tool call " + p.CallID + " (" + p.Name + ") awaits approval: jido-bus conv approve " + t.status.Project + "/" + t.status.Conversation + " " + p.CallID
				break
			}
		}
	}
	if text == "" {
		return nil
	}
	m := a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart(text))
	m.TaskID, m.ContextID = a2a.TaskID(taskID), taskID
	return m
}

// task is the A2A task of the conversation as folded so far; history is
// cut to its last historyLength messages when that is given.
func (t *turn) task(taskID string, historyLength *int) *a2a.Task {
	history := t.history
	if historyLength != nil && *historyLength >= 0 && *historyLength < len(history) {
		history = history[len(history)-*historyLength:]
	}
	at := t.status.UpdatedAt
	return &a2a.Task{
		ID:        a2a.TaskID(taskID),
		ContextID: taskID,
		Status:    a2a.TaskStatus{State: t.state(), Message: t.statusMessage(taskID), Timestamp: timestamp(at)},
		History:   history,
		Artifacts: t.answers,
	}
}

func timestamp(at time.Time) *time.Time {
	if at.IsZero() {
		return nil
	}
	return &at
}

// message is the A2A message of a user or final assistant event; its id
// is the event's, so it is the same in every read.
func message(taskID string, role a2a.MessageRole, ev *conversation.Event) *a2a.Message {
	return &a2a.Message{
		ID: ev.ID, Role: role, TaskID: a2a.TaskID(taskID), ContextID: taskID,
		Parts: a2a.ContentParts{a2a.NewTextPart(ev.Data.Text)},
	}
}

// answerID names the artifact of the answer to the user message at seq.
func answerID(userSeq uint64) a2a.ArtifactID {
	return a2a.ArtifactID("answer-" + strconv.FormatUint(userSeq, 10))
}

func answer(userSeq uint64, text string) *a2a.Artifact {
	return &a2a.Artifact{ID: answerID(userSeq), Name: "answer", Parts: a2a.ContentParts{a2a.NewTextPart(text)}}
}

// toolCall is the data part of a tool call's status update.
type toolCall struct {
	CallID string          `json:"call_id"`
	Name   string          `json:"name,omitempty"`
	State  string          `json:"state"`
	Args   json.RawMessage `json:"args,omitempty"`
	Error  string          `json:"error,omitempty"`
}

// streamed turns one conversation event into the A2A events a stream
// sends for it, after t has folded it: tool calls as working status
// updates with the call as data, deltas as appended chunks of the turn's
// answer artifact, the final message as that artifact whole (replacing
// the chunks), and a status update whenever the task's state changes.
type streamer struct {
	taskID string
	last   a2a.TaskState
	// deltaReq is the LLM call the last delta belonged to; a delta of
	// another call starts the artifact afresh.
	deltaReq string
	// tools names the calls seen requested (their outcomes carry only
	// the call id).
	tools map[string]string
}

func (s *streamer) info() a2a.TaskInfo {
	return a2a.TaskInfo{TaskID: a2a.TaskID(s.taskID), ContextID: s.taskID}
}

func (s *streamer) events(t *turn, ev *conversation.Event) []a2a.Event {
	var out []a2a.Event
	d := &ev.Data
	switch ev.Type {
	case convevent.AssistantDelta:
		if ev.Seq != 0 || d.Text == "" || t.user == 0 {
			break
		}
		e := a2a.NewArtifactUpdateEvent(s.info(), answerID(t.user), a2a.NewTextPart(d.Text))
		e.Append = s.deltaReq == ev.CausationID
		s.deltaReq = ev.CausationID
		out = append(out, e)
	case convevent.AssistantMessage:
		if d.ToolCalls == 0 {
			e := a2a.NewArtifactUpdateEvent(s.info(), answerID(t.user), a2a.NewTextPart(d.Text))
			e.Artifact.Name = "answer"
			e.LastChunk = true
			out = append(out, e)
		}
	case convevent.ToolRequested, convevent.ToolStarted, convevent.ToolCompleted, convevent.ToolFailed,
		convevent.ToolCancelled, convevent.ToolTimeout, convevent.ToolApprovalRequested:
		if s.tools == nil {
			s.tools = map[string]string{}
		}
		if d.Name != "" {
			s.tools[d.CallID] = d.Name
		}
		tc := toolCall{CallID: d.CallID, Name: s.tools[d.CallID], State: ev.Type[len("conversation.tool."):], Args: d.Args}
		if d.Error != nil {
			tc.Error = d.Error.Type + ": " + d.Error.Message
		}
		m := a2a.NewMessageForTask(a2a.MessageRoleAgent, s.info(), a2a.NewDataPart(map[string]any{"tool_call": tc}))
		state := t.state()
		out = append(out, a2a.NewStatusUpdateEvent(s.info(), state, m))
		s.last = state
		return out
	}
	if state := t.state(); state != s.last && ev.Seq != 0 {
		out = append(out, a2a.NewStatusUpdateEvent(s.info(), state, t.statusMessage(s.taskID)))
		s.last = state
	}
	return out
}
