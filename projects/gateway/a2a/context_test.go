package a2a

import (
	"errors"
	"strings"
	"testing"

	sdk "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
)

// inContext is a user message in context, of task when task is not "".
func inContext(text, context string, task sdk.TaskID) *sdk.SendMessageRequest {
	m := sdk.NewMessage(sdk.MessageRoleUser, sdk.NewTextPart(text))
	m.ContextID, m.TaskID = context, task
	return &sdk.SendMessageRequest{Message: m}
}

// TestFollowUpInContext (issue 21, item 16): a message with the contextId
// of a completed task starts the context's next task, and the first
// stays as it ended; a message with the ended task's id is refused,
// naming the contextId; while a task works, a message neither joins it
// nor starts another; ids of tasks never started are task_not_found, ids
// of no task's form invalid.
func TestFollowUpInContext(t *testing.T) {
	ctx := testCtx(t)
	h := newFakeHost("p1")
	c, _ := client(t, ctx, serve(t, h, Options{}).URL, "p1")
	res, err := c.SendMessage(ctx, userText("read a.txt"))
	if err != nil {
		t.Fatal(err)
	}
	first := res.(*sdk.Task)
	if first.Status.State != sdk.TaskStateCompleted || first.ContextID != string(first.ID) {
		t.Fatalf("the first task: %+v", first)
	}
	res, err = c.SendMessage(ctx, inContext("and again", first.ContextID, ""))
	if err != nil {
		t.Fatal(err)
	}
	second := res.(*sdk.Task)
	if second.ID != first.ID+":2" || second.ContextID != first.ContextID || second.Status.State != sdk.TaskStateCompleted {
		t.Fatalf("the follow-up: %+v, want task %s:2 of the same context, completed", second, first.ID)
	}
	if len(second.History) != 3 || second.History[0].Parts[0].Text() != "and again" {
		t.Fatalf("the second task's history %+v: want its own messages", second.History)
	}
	again, err := c.GetTask(ctx, &sdk.GetTaskRequest{ID: first.ID})
	if err != nil || again.Status.State != sdk.TaskStateCompleted || len(again.History) != 3 || again.History[0].Parts[0].Text() != "read a.txt" {
		t.Fatalf("the first task after the second: %+v %v", again, err)
	}

	_, err = c.SendMessage(ctx, inContext("more", first.ContextID, first.ID))
	if !errors.Is(err, sdk.ErrInvalidParams) || !strings.Contains(err.Error(), "contextId "+first.ContextID) {
		t.Fatalf("a message to the ended task: %v, want invalid params naming the contextId", err)
	}
	if _, err := c.CancelTask(ctx, &sdk.CancelTaskRequest{ID: first.ID}); !errors.Is(err, sdk.ErrTaskNotCancelable) {
		t.Fatalf("cancel the ended task: %v", err)
	}

	// A task that works: a message to it, or in its context, is refused.
	res, err = c.SendMessage(ctx, &sdk.SendMessageRequest{Message: inContext("hold on", first.ContextID, "").Message, Config: &sdk.SendMessageConfig{ReturnImmediately: true}})
	if err != nil {
		t.Fatal(err)
	}
	held := res.(*sdk.Task)
	if held.ID != first.ID+":3" || held.Status.State != sdk.TaskStateSubmitted {
		t.Fatalf("the held task: %+v", held)
	}
	before, _ := h.ConversationEvents(ctx, "p1/"+first.ContextID)
	for _, req := range []*sdk.SendMessageRequest{inContext("now", first.ContextID, ""), inContext("now", first.ContextID, held.ID)} {
		if _, err := c.SendMessage(ctx, req); !errors.Is(err, sdk.ErrInvalidParams) || !strings.Contains(err.Error(), string(held.ID)) {
			t.Fatalf("a message while %s works (taskId %q): %v, want it refused naming the task", held.ID, req.Message.TaskID, err)
		}
	}
	if after, _ := h.ConversationEvents(ctx, "p1/"+first.ContextID); len(after) != len(before) {
		t.Fatalf("refused messages appended %d events", len(after)-len(before))
	}
	if _, err := c.CancelTask(ctx, &sdk.CancelTaskRequest{ID: held.ID}); err != nil {
		t.Fatal(err)
	}

	for id, want := range map[sdk.TaskID]error{first.ID + ":9": sdk.ErrTaskNotFound, first.ID + ":1": sdk.ErrInvalidParams, "x:y": sdk.ErrInvalidParams} {
		if _, err := c.GetTask(ctx, &sdk.GetTaskRequest{ID: id}); !errors.Is(err, want) {
			t.Errorf("GetTask %s: %v, want %v", id, err, want)
		}
	}
}

// TestSubscribeMidAnswer (issue 21, item 13): a client that subscribes
// to a task while its answer streams, and folds the updates by A2A's
// artifact rules, ends with exactly the artifacts GetTask returns.
func TestSubscribeMidAnswer(t *testing.T) {
	ctx := testCtx(t)
	h := newFakeHost("p1")
	c, _ := client(t, ctx, serve(t, h, Options{}).URL, "p1")
	res, err := c.SendMessage(ctx, &sdk.SendMessageRequest{Message: userText("hold the answer").Message, Config: &sdk.SendMessageConfig{ReturnImmediately: true}})
	if err != nil {
		t.Fatal(err)
	}
	id := res.(*sdk.Task).ID
	key := "p1/" + string(id)
	h.mu.Lock()
	user := h.convs[key][1].ID
	// The first answer streams before the client comes: it holds none of it.
	h.publishLocked(key, "llm."+user+".1.1", fakeStep[:7])
	h.mu.Unlock()

	c2 := &clientTask{creates: map[sdk.ArtifactID]int{}}
	for ev, err := range c.SubscribeToTask(ctx, &sdk.SubscribeToTaskRequest{ID: id}) {
		if err != nil {
			t.Fatal(err)
		}
		if task, ok := ev.(*sdk.Task); ok {
			c2.task = task
			go h.play(key, user) // the rest of the turn, as the client listens
			continue
		}
		c2.apply(ev)
	}
	got, err := c.GetTask(ctx, &sdk.GetTaskRequest{ID: id})
	if err != nil {
		t.Fatal(err)
	}
	if want, have := texts(got.Artifacts), texts(c2.task.Artifacts); len(want) != 2 || strings.Join(want, "|") != strings.Join(have, "|") || len(c2.problems) > 0 {
		t.Fatalf("the subscriber holds %q (%v), GetTask returns %q", have, c2.problems, want)
	}
	if c2.task.Status.State != sdk.TaskStateCompleted || c2.task.Status.Message == nil || c2.task.Status.Message.Parts[0].Text() != fakeAnswer {
		t.Fatalf("the subscriber's status %+v: want completed with the answer", c2.task.Status)
	}
}

// TestErrorsNameTheClientsMethods (issue 21, item 15): an error tells a
// client what to call next in its own protocol's names — a 1.0 client is
// told of GetTask and SubscribeToTask, a 0.3 one of tasks/get and
// tasks/resubscribe — and of states as its protocol writes them. (A2A
// 0.3 has no tasks/list: its client refuses ListTasks itself.)
func TestErrorsNameTheClientsMethods(t *testing.T) {
	ctx := testCtx(t)
	h := newFakeHost("p1")
	srv := serve(t, h, Options{})
	card, err := agentcard.DefaultResolver.Resolve(ctx, srv.URL+"/a2a/p1/")
	if err != nil {
		t.Fatal(err)
	}
	var v0 *sdk.AgentInterface
	for _, i := range card.SupportedInterfaces {
		if i.ProtocolVersion == a2av0.Version {
			v0 = i
		}
	}
	c10, err := a2aclient.NewFromCard(ctx, card)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c10.Destroy() }()
	c03, err := a2aclient.NewFromEndpoints(ctx, []*sdk.AgentInterface{v0}, a2av0.WithJSONRPCTransport(a2av0.JSONRPCTransportConfig{}))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c03.Destroy() }()

	for _, tc := range []struct {
		name       string
		c          *a2aclient.Client
		want, not  []string
		stateNamed string
	}{
		{"1.0", c10, []string{"GetTask reads it", "SendMessage without a taskId", "ListTasks is not offered", "SendStreamingMessage or SubscribeToTask"}, []string{"tasks/", "message/"}, "TASK_STATE_COMPLETED"},
		{"0.3", c03, []string{"tasks/get reads it", "message/send without a taskId", "message/stream or tasks/resubscribe"}, []string{"GetTask", "SendMessage", "SubscribeToTask"}, "(completed)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := tc.c.SendMessage(ctx, userText("read a.txt"))
			if err != nil {
				t.Fatal(err)
			}
			id := res.(*sdk.Task).ID
			var said []string
			for _, err := range tc.c.SubscribeToTask(ctx, &sdk.SubscribeToTaskRequest{ID: id}) {
				said = append(said, errorText(err))
				break
			}
			_, err = tc.c.GetTask(ctx, &sdk.GetTaskRequest{ID: "nosuch"})
			said = append(said, errorText(err))
			_, err = tc.c.ListTasks(ctx, &sdk.ListTasksRequest{})
			said = append(said, errorText(err))
			_, err = tc.c.GetTaskPushConfig(ctx, &sdk.GetTaskPushConfigRequest{TaskID: id, ID: "x"})
			said = append(said, errorText(err))
			_, err = tc.c.SendMessage(ctx, inContext("more", string(id), id))
			said = append(said, errorText(err))
			all := strings.Join(said, "\n")
			for _, w := range tc.want {
				if !strings.Contains(all, w) {
					t.Errorf("the errors do not say %q:\n%s", w, all)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(all, n) {
					t.Errorf("the errors name %q, of the other protocol:\n%s", n, all)
				}
			}
			if !strings.Contains(said[len(said)-1], tc.stateNamed) {
				t.Errorf("the ended task's state is not written %s: %s", tc.stateNamed, said[len(said)-1])
			}
		})
	}
}

func errorText(err error) string {
	if err == nil {
		return "<no error>"
	}
	return err.Error()
}
