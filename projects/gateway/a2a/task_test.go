package a2a

import (
	"encoding/json"
	"testing"
	"time"

	sdk "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/conversation"
	"github.com/jido-bus/jido-bus/conversation/views"
)

// convLog builds a conversation's logged events in order.
type convLog struct{ evs []*views.Event }

func (l *convLog) add(typ, id, causation string, d conversation.Data) {
	l.evs = append(l.evs, &views.Event{Type: typ, ID: id, CausationID: causation, Seq: uint64(len(l.evs) + 1), Time: time.Unix(1700000000+int64(len(l.evs)), 0), Data: d})
}

func (l *convLog) user(id, text string) {
	l.add(conversation.UserMessage, id, id, conversation.Data{Text: text})
}

// answer logs a turn's one-step answer to user message u.
func (l *convLog) answer(u, text string) {
	req := "llm." + u + ".1.1"
	l.add(conversation.LLMRequested, req, u, conversation.Data{Step: 1, Attempt: 1})
	l.add(conversation.AssistantMessage, req+".message", req, conversation.Data{Text: text})
	l.add(conversation.LLMCompleted, req+".completed", req, conversation.Data{})
}

func (l *convLog) fold() *contextFold {
	f := newContextFold("c1")
	for _, ev := range l.evs {
		f.fold(ev)
	}
	return f
}

func started() *convLog {
	l := &convLog{}
	l.add(conversation.Started, "s", "", conversation.Data{ProjectID: "p1", ConversationID: "c1", Assistant: true})
	return l
}

func taskJSON(t *testing.T, task *sdk.Task) string {
	t.Helper()
	b, err := json.Marshal(task)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestContextTasks (issue 21, item 16): a message after the context's
// task completed begins the next task (c1:2), and the first stays exactly
// as it ended; a message while a task waits for approval is part of it;
// a message the loop queued during a task's last model call becomes a
// task of its own when the loop answers it, the task before unchanged;
// the text the model writes before calling a tool is in the history.
func TestContextTasks(t *testing.T) {
	l := started()
	l.user("u1", "first question")
	req := "llm.u1.1.1"
	l.add(conversation.LLMRequested, req, "u1", conversation.Data{Step: 1, Attempt: 1})
	l.add(conversation.AssistantMessage, req+".message", req, conversation.Data{Text: "Let me look.", ToolCalls: 1})
	l.add(conversation.ToolRequested, req+".call.1", req, conversation.Data{CallID: "k1", Name: "read_file"})
	l.add(conversation.LLMCompleted, req+".completed", req, conversation.Data{ToolCalls: 1})
	l.add(conversation.ToolCompleted, "k1.done", "k1", conversation.Data{CallID: "k1"})
	req = "llm.u1.2.1"
	l.add(conversation.LLMRequested, req, "k1", conversation.Data{Step: 2, Attempt: 1})
	l.add(conversation.AssistantMessage, req+".message", req, conversation.Data{Text: "first answer"})
	l.add(conversation.LLMCompleted, req+".completed", req, conversation.Data{})
	f := l.fold()
	first := f.find("c1")
	if first == nil || f.state(first) != sdk.TaskStateCompleted {
		t.Fatalf("the first task: %+v", first)
	}
	was := taskJSON(t, f.task(first, nil))
	if h := f.task(first, nil).History; len(h) != 3 || h[1].Parts[0].Text() != "Let me look." {
		t.Fatalf("the first task's history %s: want the question, the text before the tool call, the answer", was)
	}

	// The next message: a new task; the first does not change.
	l.user("u2", "second question")
	f = l.fold()
	second := f.find("c1:2")
	if second == nil || f.latest() != second || f.state(second) != sdk.TaskStateWorking {
		t.Fatalf("after a second message: tasks %d, want c1:2 working", len(f.tasks))
	}
	// It waits for an approval; a message then is part of it.
	req = "llm.u2.1.1"
	l.add(conversation.LLMRequested, req, "u2", conversation.Data{Step: 1, Attempt: 1})
	l.add(conversation.AssistantMessage, req+".message", req, conversation.Data{ToolCalls: 1})
	l.add(conversation.ToolRequested, req+".call.1", req, conversation.Data{CallID: "k2", Name: "write_file"})
	l.add(conversation.LLMCompleted, req+".completed", req, conversation.Data{ToolCalls: 1})
	l.add(conversation.ToolApprovalRequested, "k2.ask", "k2", conversation.Data{CallID: "k2", Name: "write_file"})
	f = l.fold()
	if s := f.state(f.find("c1:2")); s != sdk.TaskStateInputRequired {
		t.Fatalf("c1:2 waiting for an approval is %s", s)
	}
	if m := f.statusMessage(f.find("c1:2")); m == nil || m.ID != "k2.ask.status" {
		t.Fatalf("the approval's status message %+v: want one named after the request", m)
	}
	l.user("u3", "go ahead")
	l.add(conversation.ToolApproval, "k2.yes", "k2", conversation.Data{CallID: "k2", Decision: conversation.DecisionApprove})
	l.add(conversation.ToolCompleted, "k2.done", "k2", conversation.Data{CallID: "k2"})
	req = "llm.u2.2.1"
	l.add(conversation.LLMRequested, req, "k2", conversation.Data{Step: 2, Attempt: 1})
	// A message during the last model call: the loop queues it and
	// answers it in a turn of its own once this one ends.
	l.user("u4", "one more thing")
	l.add(conversation.AssistantMessage, req+".message", req, conversation.Data{Text: "second answer"})
	l.add(conversation.LLMCompleted, req+".completed", req, conversation.Data{})
	f = l.fold()
	second = f.find("c1:2")
	if len(f.tasks) != 2 || f.state(second) != sdk.TaskStateCompleted || !second.users["u3"] || !second.users["u4"] {
		t.Fatalf("c1:2: %d tasks, state %s, users %v", len(f.tasks), f.state(second), second.users)
	}
	was2 := taskJSON(t, f.task(second, nil))
	l.answer("u4", "third answer")
	f = l.fold()
	third := f.find("c1:3")
	if third == nil || f.state(third) != sdk.TaskStateCompleted || len(third.history) != 2 || third.history[0].ID != "u4" {
		t.Fatalf("the queued message's turn: %+v, want task c1:3 with the message and its answer", third)
	}
	if got := taskJSON(t, f.task(f.find("c1"), nil)); got != was {
		t.Errorf("the first task changed after it ended:\n%s\nwas\n%s", got, was)
	}
	if got := taskJSON(t, f.task(f.find("c1:2"), nil)); got != was2 {
		t.Errorf("the second task changed after it ended:\n%s\nwas\n%s", got, was2)
	}
}

// TestContextTaskRetries: an attempt that fails and is made again keeps
// the task working — at once (retryable without a delay: the fold took it
// for the task's failure) or after an interruption while attempts are
// left — and the last attempt's failure ends it.
func TestContextTaskRetries(t *testing.T) {
	for _, tc := range []struct {
		name string
		data conversation.Data
		want sdk.TaskState
	}{
		{"retried after a delay", conversation.Data{Attempt: 1, Retryable: true, RetryInMS: 500, Error: &bus.Error{Type: "server", Message: "503"}}, sdk.TaskStateWorking},
		{"retried at once", conversation.Data{Attempt: 1, Retryable: true, Error: &bus.Error{Type: "stream", Message: "cut"}}, sdk.TaskStateWorking},
		{"interrupted", conversation.Data{Attempt: 1, Error: &bus.Error{Type: conversation.ReasonInterrupted, Message: "the node stopped"}}, sdk.TaskStateWorking},
		{"interrupted at the last attempt", conversation.Data{Attempt: conversation.MaxAttempts, Error: &bus.Error{Type: conversation.ReasonInterrupted, Message: "the node stopped"}}, sdk.TaskStateFailed},
		{"not retryable", conversation.Data{Attempt: 1, Error: &bus.Error{Type: "bad_request", Message: "400"}}, sdk.TaskStateFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := started()
			l.user("u1", "question")
			l.add(conversation.LLMRequested, "llm.u1.1.1", "u1", conversation.Data{Step: 1, Attempt: 1})
			l.add(conversation.LLMFailed, "llm.u1.1.1.failed", "llm.u1.1.1", tc.data)
			f := l.fold()
			task := f.find("c1")
			if s := f.state(task); s != tc.want {
				t.Fatalf("after the failure the task is %s, want %s", s, tc.want)
			}
			if tc.want != sdk.TaskStateWorking {
				return
			}
			l.add(conversation.LLMRequested, "llm.u1.1.2", "llm.u1.1.1.failed", conversation.Data{Step: 1, Attempt: 2})
			l.add(conversation.AssistantMessage, "llm.u1.1.2.message", "llm.u1.1.2", conversation.Data{Text: "the answer"})
			l.add(conversation.LLMCompleted, "llm.u1.1.2.completed", "llm.u1.1.2", conversation.Data{})
			f = l.fold()
			if len(f.tasks) != 1 || f.state(f.find("c1")) != sdk.TaskStateCompleted {
				t.Fatalf("after the retry: %d tasks, c1 %s; want one task, completed", len(f.tasks), f.state(f.find("c1")))
			}
		})
	}
}

// TestTaskIDs: a context's first task has its id, the n-th <id>:<n>;
// other forms name no task.
func TestTaskIDs(t *testing.T) {
	for _, tc := range []struct {
		id   string
		conv string
		n    int
		ok   bool
	}{
		{"c1", "c1", 1, true},
		{"c1:2", "c1", 2, true},
		{"c1:17", "c1", 17, true},
		{"c1:1", "", 0, false},
		{"c1:02", "", 0, false},
		{"c1:x", "", 0, false},
		{"c1:2:3", "", 0, false},
		{"c1:", "", 0, false},
	} {
		conv, n, ok := parseTaskID(tc.id)
		if conv != tc.conv || n != tc.n || ok != tc.ok {
			t.Errorf("parseTaskID(%q) = %q %d %v, want %q %d %v", tc.id, conv, n, ok, tc.conv, tc.n, tc.ok)
		}
		if ok && taskID(conv, n) != tc.id {
			t.Errorf("taskID(%q, %d) = %q, want %q", conv, n, taskID(conv, n), tc.id)
		}
	}
}
