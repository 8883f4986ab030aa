package a2a

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	sdk "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"

	"github.com/jido-bus/jido-bus/conversation"
	"github.com/jido-bus/jido-bus/projects/gateway"
)

// as is a transport that names the caller, as a token would at the door.
type as struct {
	name    string
	admin   bool
	maxMode string
}

func (a as) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Test-Caller", a.name)
	if a.admin {
		r.Header.Set("X-Test-Admin", "1")
	}
	if a.maxMode != "" {
		r.Header.Set("X-Test-Max-Mode", a.maxMode)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// serveCallers starts the gateway of h with the caller each request
// names (X-Test-Caller, X-Test-Admin), as the front door sets it.
func serveCallers(t *testing.T, h Host) *httptest.Server {
	t.Helper()
	g := New(h, Options{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := gateway.Caller{Name: r.Header.Get("X-Test-Caller"), Remote: r.RemoteAddr, Admin: r.Header.Get("X-Test-Admin") != "", MaxMode: r.Header.Get("X-Test-Max-Mode")}
		g.Handler().ServeHTTP(w, r.WithContext(gateway.WithCaller(r.Context(), c)))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func clientAs(t *testing.T, ctx context.Context, base string, who as) *a2aclient.Client {
	t.Helper()
	hc := &http.Client{Transport: who}
	card, err := agentcard.NewResolver(hc).Resolve(ctx, base+"/a2a/p1")
	if err != nil {
		t.Fatal(err)
	}
	c, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithJSONRPCTransport(hc))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Destroy() })
	return c
}

// TestTasksBelongToTheirCaller: a task started by one caller does not
// exist for another caller of the same project — tasks/get,
// tasks/cancel, tasks/resubscribe, a message with its taskId or its
// contextId are all task_not_found, and nothing is appended to it — while
// its owner and an admin reach it.
func TestTasksBelongToTheirCaller(t *testing.T) {
	ctx := testCtx(t)
	h := newFakeHost("p1")
	srv := serveCallers(t, h)
	alice := clientAs(t, ctx, srv.URL, as{name: "alice"})
	bob := clientAs(t, ctx, srv.URL, as{name: "bob"})
	admin := clientAs(t, ctx, srv.URL, as{name: "ops", admin: true})

	res, err := alice.SendMessage(ctx, &sdk.SendMessageRequest{Message: sdk.NewMessage(sdk.MessageRoleUser, sdk.NewTextPart("hold on")), Config: &sdk.SendMessageConfig{ReturnImmediately: true}})
	if err != nil {
		t.Fatal(err)
	}
	id := res.(*sdk.Task).ID
	events, _ := h.ConversationEvents(ctx, "p1/"+string(id))
	before := len(events)

	if _, err := bob.GetTask(ctx, &sdk.GetTaskRequest{ID: id}); !errors.Is(err, sdk.ErrTaskNotFound) {
		t.Fatalf("bob gets alice's task: %v, want task not found", err)
	}
	if _, err := bob.CancelTask(ctx, &sdk.CancelTaskRequest{ID: id}); !errors.Is(err, sdk.ErrTaskNotFound) {
		t.Fatalf("bob cancels alice's task: %v, want task not found", err)
	}
	for ev, err := range bob.SubscribeToTask(ctx, &sdk.SubscribeToTaskRequest{ID: id}) {
		if !errors.Is(err, sdk.ErrTaskNotFound) {
			t.Fatalf("bob follows alice's task: %v %v, want task not found", ev, err)
		}
		break
	}
	for _, m := range []*sdk.Message{
		{ID: "m1", Role: sdk.MessageRoleUser, TaskID: id, Parts: sdk.ContentParts{sdk.NewTextPart("mine now")}},
		{ID: "m2", Role: sdk.MessageRoleUser, ContextID: string(id), Parts: sdk.ContentParts{sdk.NewTextPart("mine now")}},
	} {
		if _, err := bob.SendMessage(ctx, &sdk.SendMessageRequest{Message: m}); !errors.Is(err, sdk.ErrTaskNotFound) {
			t.Fatalf("bob continues alice's task (%+v): %v, want task not found", m, err)
		}
	}
	if events, _ := h.ConversationEvents(ctx, "p1/"+string(id)); len(events) != before {
		t.Fatalf("bob's requests appended %d events to alice's task", len(events)-before)
	}

	if task, err := alice.GetTask(ctx, &sdk.GetTaskRequest{ID: id}); err != nil || task.ID != id {
		t.Fatalf("alice gets her task: %+v %v", task, err)
	}
	if task, err := admin.GetTask(ctx, &sdk.GetTaskRequest{ID: id}); err != nil || task.ID != id {
		t.Fatalf("an admin gets alice's task: %+v %v", task, err)
	}
	if task, err := admin.CancelTask(ctx, &sdk.CancelTaskRequest{ID: id}); err != nil || task.Status.State != sdk.TaskStateCanceled {
		t.Fatalf("an admin cancels alice's task: %+v %v", task, err)
	}
	// Listing and push configurations are not offered, to anyone: they
	// tell nothing of another's tasks.
	if _, err := bob.ListTasks(ctx, &sdk.ListTasksRequest{}); !errors.Is(err, sdk.ErrUnsupportedOperation) {
		t.Fatalf("bob lists tasks: %v, want unsupported", err)
	}
	if _, err := bob.GetTaskPushConfig(ctx, &sdk.GetTaskPushConfigRequest{TaskID: id, ID: "x"}); !errors.Is(err, sdk.ErrPushNotificationNotSupported) {
		t.Fatalf("bob reads a push config of alice's task: %v, want push not supported", err)
	}
}

// TestTasksOfNobody: a conversation started other than through the
// gateway names no owner: only an admin sees it as a task. One driven
// from outside (its loop off, its answers its sender's) is no task at
// all, admins included.
func TestTasksOfNobody(t *testing.T) {
	ctx := testCtx(t)
	h := newFakeHost("p1")
	srv := serveCallers(t, h)
	alice := clientAs(t, ctx, srv.URL, as{name: "alice"})
	admin := clientAs(t, ctx, srv.URL, as{name: "ops", admin: true})
	h.mu.Lock()
	h.appendLocked("p1/nats", conversation.Started, conversation.Data{ProjectID: "p1", ConversationID: "nats", Assistant: true})
	h.appendLocked("p1/nats", conversation.UserMessage, conversation.Data{Text: "sent over NATS"})
	h.appendLocked("p1/outside", conversation.Started, conversation.Data{ProjectID: "p1", ConversationID: "outside", By: OwnerOf(gateway.WithCaller(ctx, gateway.Caller{Name: "alice"}))})
	h.appendLocked("p1/outside", conversation.AssistantMessage, conversation.Data{Text: "FORGED"})
	h.mu.Unlock()

	if _, err := alice.GetTask(ctx, &sdk.GetTaskRequest{ID: "nats"}); !errors.Is(err, sdk.ErrTaskNotFound) {
		t.Fatalf("alice gets a task of nobody: %v, want task not found", err)
	}
	if _, err := admin.GetTask(ctx, &sdk.GetTaskRequest{ID: "nats"}); err != nil {
		t.Fatalf("an admin gets a task of nobody: %v", err)
	}
	for name, c := range map[string]*a2aclient.Client{"alice": alice, "an admin": admin} {
		if task, err := c.GetTask(ctx, &sdk.GetTaskRequest{ID: "outside"}); !errors.Is(err, sdk.ErrTaskNotFound) {
			t.Fatalf("%s gets a conversation driven from outside: %+v %v, want task not found", name, task, err)
		}
	}
}
