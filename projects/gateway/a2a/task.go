package a2a

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	sdk "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/jido-bus/jido-bus/conversation"
	"github.com/jido-bus/jido-bus/conversation/views"
)

// A conversation is an A2A context, and its tasks are its turns: a task
// begins with a user message that finds the context's latest task ended
// (completed, failed or canceled), and holds every later message until it
// ends itself. A task that has ended never changes again: what a client
// read of it stays true, and a message in its context starts the next
// task. A message while a task waits for a person (input-required) is
// part of that task, as the loop makes it part of the turn.
//
// The first task of a context has the conversation's id as its id (so a
// task keeps the id it had when a task was the whole conversation); the
// n-th, from the second on, is "<conversation>:<n>". Either way the task
// id names its conversation, so the gateway needs no table of its own.
//
// contextFold folds a conversation's events into its tasks. It is
// rebuilt from the log on every request, so a task outlives the node
// that started it, as the conversation does.
type contextFold struct {
	conv string
	// status is the conversation's status read model (the same fold the
	// node's projection runs); it says where the latest task stands.
	status *views.Status
	tasks  []*task
	// users are the user messages by event id, for a turn the loop
	// starts late (turnStarted).
	users map[string]*sdk.Message
	// steps are the artifact ids (stepArtifactID) of the model's answers
	// folded so far, text or not.
	steps map[string]bool
	// head is the last seq folded.
	head uint64
	// toolNames names every call requested so far by its call id: an
	// outcome carries only the id, and a stream that begins after the
	// fold took in a call's request (the message was sent before the
	// stream caught up) still names it.
	toolNames map[string]string
}

// task is one task of a context, as folded so far.
type task struct {
	id string
	// users are the event ids of the task's user messages.
	users map[string]bool
	// answered: a final answer (one asking for no tool) came after the
	// latest user message.
	answered bool
	// retrying: the last event is an llm.failed the loop makes again, so
	// the failure is not the task's end.
	retrying bool
	// failure is the error of the latest llm.failed, and failureID the
	// event's id.
	failure, failureID string
	// history is every user message and every text the model wrote, in
	// order.
	history []*sdk.Message
	// artifacts are the texts the model wrote, one per answer, in order.
	artifacts []*sdk.Artifact
	// answer is the final answer, the status message once completed.
	answer *sdk.Message
	// end is the task's status once it ended; it no longer changes.
	end *sdk.TaskStatus
}

func newContextFold(conv string) *contextFold {
	return &contextFold{conv: conv, status: views.NewStatus(), users: map[string]*sdk.Message{}, steps: map[string]bool{}, toolNames: map[string]string{}}
}

// taskID is the id of the n-th task (from 1) of conversation conv.
func taskID(conv string, n int) string {
	if n == 1 {
		return conv
	}
	return conv + ":" + strconv.Itoa(n)
}

// parseTaskID returns the conversation a task id names and the task's
// ordinal; ok is false for an id that is not of the form taskID makes
// (the conversation id itself is checked by the caller).
func parseTaskID(id string) (conv string, n int, ok bool) {
	conv, num, found := strings.Cut(id, ":")
	if !found {
		return id, 1, true
	}
	n, err := strconv.Atoi(num)
	if err != nil || n < 2 || strconv.Itoa(n) != num {
		return "", 0, false
	}
	return conv, n, true
}

// latest is the context's latest task, or nil before any.
func (f *contextFold) latest() *task {
	if len(f.tasks) == 0 {
		return nil
	}
	return f.tasks[len(f.tasks)-1]
}

// find returns the task of id, or nil.
func (f *contextFold) find(id string) *task {
	for _, t := range f.tasks {
		if t.id == id {
			return t
		}
	}
	return nil
}

// taskOfMessage returns the task that holds user message event id, or nil.
func (f *contextFold) taskOfMessage(id string) *task {
	for _, t := range f.tasks {
		if t.users[id] {
			return t
		}
	}
	return nil
}

// open begins the context's next task.
func (f *contextFold) open() *task {
	t := &task{id: taskID(f.conv, len(f.tasks)+1), users: map[string]bool{}}
	f.tasks = append(f.tasks, t)
	return t
}

// add appends m to t's history, as a message of t.
func (f *contextFold) add(t *task, m *sdk.Message) {
	c := *m
	c.TaskID, c.ContextID = sdk.TaskID(t.id), f.conv
	t.history = append(t.history, &c)
}

// fold applies one logged event (deltas carry no seq and change nothing).
func (f *contextFold) fold(ev *views.Event) {
	if ev.Seq == 0 || ev.Invalid != "" {
		return
	}
	f.status.Fold(ev)
	f.head = max(f.head, ev.Seq)
	t := f.latest()
	live := t != nil && t.end == nil
	if live {
		t.retrying = false
	}
	d := &ev.Data
	if ev.Type == conversation.ToolRequested && d.Name != "" {
		f.toolNames[d.CallID] = d.Name
	}
	switch ev.Type {
	case conversation.UserMessage:
		m := message(sdk.MessageRoleUser, ev)
		f.users[ev.ID] = m
		if !live {
			t, live = f.open(), true
		}
		t.users[ev.ID] = true
		t.answered, t.failure, t.failureID = false, "", ""
		f.add(t, m)
	case conversation.LLMRequested:
		if !live {
			// The loop began a turn for a message that came while the
			// task before was ending (it queues one that comes during the
			// last model call): a task of its own, whose history begins
			// with that message, since the task that ended keeps what it
			// showed.
			t, live = f.open(), true
			if m, ok := f.users[turnOf(ev.ID)]; ok {
				t.users[m.ID] = true
				f.add(t, m)
			}
		}
	case conversation.AssistantMessage:
		if !live {
			break
		}
		var m *sdk.Message
		id := stepArtifactID(ev.CausationID, ev.ID)
		f.steps[string(id)] = true
		if d.Text != "" {
			f.add(t, message(sdk.MessageRoleAgent, ev))
			m = t.history[len(t.history)-1]
			t.artifacts = append(t.artifacts, &sdk.Artifact{ID: id, Parts: sdk.ContentParts{sdk.NewTextPart(d.Text)}})
		}
		if d.ToolCalls == 0 {
			t.answered, t.answer = true, m
		}
	case conversation.LLMFailed:
		if !live {
			break
		}
		// The loop makes the call again when the executor said it may
		// (retryable), and after an interruption (a restart) while
		// attempts are left.
		t.retrying = d.Retryable || d.Error != nil && d.Error.Type == conversation.ReasonInterrupted && d.Attempt < conversation.MaxAttempts
		if d.Error != nil {
			t.failure, t.failureID = d.Error.Type+": "+d.Error.Message, ev.ID
		}
	}
	if live {
		if s := f.liveState(t); s.Terminal() {
			t.end = &sdk.TaskStatus{State: s, Message: f.liveMessage(t), Timestamp: timestamp(ev.Time)}
		}
	}
}

// turnOf is the user message id of an LLM request's id,
// llm.<turn>.<step>.<attempt>.
func turnOf(request string) string {
	t := strings.TrimPrefix(request, "llm.")
	for range 2 {
		if i := strings.LastIndexByte(t, '.'); i >= 0 {
			t = t[:i]
		}
	}
	return t
}

// stepArtifactID is the artifact of one answer of the model: the LLM
// request's id without its attempt (llm.<turn>.<step>), so that a retry's
// text replaces the text of the attempt it retries; eventID when the
// request id is not of that form.
func stepArtifactID(request, eventID string) sdk.ArtifactID {
	if rest, ok := strings.CutPrefix(request, "llm."); ok {
		if i := strings.LastIndexByte(rest, '.'); i > 0 {
			if _, err := strconv.Atoi(rest[i+1:]); err == nil && strings.Contains(rest[:i], ".") {
				return sdk.ArtifactID("llm." + rest[:i])
			}
		}
	}
	if request != "" {
		return sdk.ArtifactID(request)
	}
	return sdk.ArtifactID(eventID)
}

// stepBefore is the artifact id of the step before the one of request
// (llm.<turn>.<step>.<attempt>), and false for a turn's first step or a
// request id of another form.
func stepBefore(request string) (sdk.ArtifactID, bool) {
	step := string(stepArtifactID(request, ""))
	i := strings.LastIndexByte(step, '.')
	if !strings.HasPrefix(step, "llm.") || i < 0 {
		return "", false
	}
	n, err := strconv.Atoi(step[i+1:])
	if err != nil || n < 2 {
		return "", false
	}
	return sdk.ArtifactID(step[:i+1] + strconv.Itoa(n-1)), true
}

// state is where task t stands.
func (f *contextFold) state(t *task) sdk.TaskState {
	if t.end != nil {
		return t.end.State
	}
	return f.liveState(t)
}

// liveState is the state of the context's latest task, t, from the
// conversation's status read model: idle is read as the task's end once
// it has its answer.
func (f *contextFold) liveState(t *task) sdk.TaskState {
	switch f.status.State {
	case views.StateCancelled:
		return sdk.TaskStateCanceled
	case views.StateFailed:
		if t.retrying {
			return sdk.TaskStateWorking
		}
		return sdk.TaskStateFailed
	case views.StateCompleted:
		return sdk.TaskStateCompleted
	case views.StateAwaitingApproval:
		return sdk.TaskStateInputRequired
	case views.StateAwaitingLLM, views.StateAwaitingTools:
		return sdk.TaskStateWorking
	}
	if t.answered {
		return sdk.TaskStateCompleted
	}
	// The user's message is in and the loop has not asked the model yet.
	return sdk.TaskStateWorking
}

// ended reports whether task t has stopped moving on its own: it ended,
// or it waits for a person (input-required).
func (f *contextFold) ended(t *task) bool {
	s := f.state(t)
	return s.Terminal() || s == sdk.TaskStateInputRequired
}

// statusMessage says why task t is where it is.
func (f *contextFold) statusMessage(t *task) *sdk.Message {
	if t.end != nil {
		return t.end.Message
	}
	return f.liveMessage(t)
}

// liveMessage is the status message of the latest task: the answer once
// completed, the failure, or the tool call that waits for approval. Its
// id is the id of the event it tells of, so every read gives the same
// message.
func (f *contextFold) liveMessage(t *task) *sdk.Message {
	var id, text string
	switch f.liveState(t) {
	case sdk.TaskStateCompleted:
		return t.answer
	case sdk.TaskStateFailed:
		id, text = t.failureID, t.failure
		if text == "" && f.status.Stopped != "" {
			id, text = f.status.LastEventID, "the conversation stopped: "+f.status.Stopped
		}
	case sdk.TaskStateInputRequired:
		for _, p := range f.status.PendingTools {
			if p.State == views.ToolAwaitingApproval && p.Approval != nil {
				id = p.Approval.EventID
				text = fmt.Sprintf("tool call %s (%s) awaits approval: jido-bus conv approve %s/%s %s", p.CallID, p.Name, f.status.Project, f.status.Conversation, p.CallID)
				break
			}
		}
	}
	if text == "" {
		return nil
	}
	m := sdk.NewMessage(sdk.MessageRoleAgent, sdk.NewTextPart(text))
	if id != "" {
		m.ID = id + ".status"
	}
	m.TaskID, m.ContextID = sdk.TaskID(t.id), f.conv
	return m
}

// task is the A2A task of t as folded so far; history is cut to its last
// historyLength messages when that is given.
func (f *contextFold) task(t *task, historyLength *int) *sdk.Task {
	history := t.history
	if historyLength != nil && *historyLength >= 0 && *historyLength < len(history) {
		history = history[len(history)-*historyLength:]
	}
	status := sdk.TaskStatus{State: f.state(t), Message: f.statusMessage(t), Timestamp: timestamp(f.status.UpdatedAt)}
	if t.end != nil {
		status = *t.end
	}
	return &sdk.Task{
		ID:        sdk.TaskID(t.id),
		ContextID: f.conv,
		Status:    status,
		History:   history,
		Artifacts: t.artifacts,
	}
}

func timestamp(at time.Time) *time.Time {
	if at.IsZero() {
		return nil
	}
	return &at
}

// message is the A2A message of a user message or of a text the model
// wrote; its id is the event's, so it is the same in every read.
func message(role sdk.MessageRole, ev *views.Event) *sdk.Message {
	return &sdk.Message{ID: ev.ID, Role: role, Parts: sdk.ContentParts{sdk.NewTextPart(ev.Data.Text)}}
}
