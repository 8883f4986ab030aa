package node

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"

	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/jido-bus/jido-bus/projects"
	"github.com/jido-bus/jido-bus/projects/gateway"
	a2agw "github.com/jido-bus/jido-bus/projects/gateway/a2a"
)

// a2aScript answers each conversation's first request with a read_file
// call and its second with a text streamed slowly in chunks, so a test
// can act while the answer streams.
const a2aScript = `{"tool_calls":[{"name":"read_file","args":{"path":"a.txt"}}]}
{"text":"a.txt says: hello world, and that is all it says.","chunk":5,"delay_ms":60}
`

// a2aGateway serves n's A2A gateway over a real HTTP server, with a
// caller in each request's context as the front door puts it.
func a2aGateway(t *testing.T, n *Node) *httptest.Server {
	t.Helper()
	g := a2agw.New(n.A2AHost(), a2agw.Options{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.Handler().ServeHTTP(w, r.WithContext(gateway.WithCaller(r.Context(), gateway.Caller{Name: "a2a-test", Remote: r.RemoteAddr})))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func a2aClient(t *testing.T, ctx context.Context, base string) *a2aclient.Client {
	t.Helper()
	card, err := agentcard.DefaultResolver.Resolve(ctx, base+"/a2a/p1")
	if err != nil {
		t.Fatal(err)
	}
	if card.Name != "p1" || !card.Capabilities.Streaming {
		t.Fatalf("card %+v", card)
	}
	c, err := a2aclient.NewFromCard(ctx, card)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Destroy() })
	return c
}

func a2aText(text string) *a2a.SendMessageRequest {
	return &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text))}
}

// gatewayRequests returns the project.gateway.request records of project
// p1's stream.
func gatewayRequests(t *testing.T, n *Node) []gateway.Request {
	t.Helper()
	var out []gateway.Request
	for e, err := range n.Log().ReadStream("project/p1", eventlog.ReadOptions{Types: projects.TypeGatewayRequest}) {
		if err != nil {
			t.Fatal(err)
		}
		var r gateway.Request
		if err := json.Unmarshal(e.Event.Data(), &r); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

// TestA2AGatewayScriptedTask is the done-when for A2A: the
// a2a-go client fetches the card, streams a message the scripted model
// answers with a read_file call and then text, to completion; a second
// task is cancelled while its answer streams; both are in the project's
// stream as gateway requests.
func TestA2AGatewayScriptedTask(t *testing.T) {
	n := startNode(t, t.TempDir())
	defer func() {
		if err := n.Shutdown(context.Background()); err != nil {
			t.Error(err)
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := n.Projects().Open(ctx, projects.OpenRequest{Root: assistantProject(t, a2aScript, ""), ID: "p1"}); err != nil {
		t.Fatal(err)
	}
	c := a2aClient(t, ctx, a2aGateway(t, n).URL)

	var id a2a.TaskID
	var toolStates []string
	// The answer as a client holds it that applies A2A's artifact rules:
	// an update without append writes the artifact, one with append adds
	// to it.
	var answer string
	var last a2a.TaskState
	for ev, err := range c.SendStreamingMessage(ctx, a2aText("what does a.txt say?")) {
		if err != nil {
			t.Fatal(err)
		}
		switch e := ev.(type) {
		case *a2a.Task:
			id = e.ID
		case *a2a.TaskStatusUpdateEvent:
			last = e.Status.State
			if m := e.Status.Message; m != nil && len(m.Parts) > 0 {
				if d, ok := m.Parts[0].Data().(map[string]any); ok {
					tc := d["tool_call"].(map[string]any)
					toolStates = append(toolStates, tc["name"].(string)+":"+tc["state"].(string))
				}
			}
		case *a2a.TaskArtifactUpdateEvent:
			if !e.Append {
				answer = ""
			}
			answer += e.Artifact.Parts[0].Text()
		}
	}
	const want = "a.txt says: hello world, and that is all it says."
	if last != a2a.TaskStateCompleted || answer != want {
		t.Fatalf("stream ended %s with answer %q, want %q", last, answer, want)
	}
	if len(toolStates) != 3 || toolStates[0] != "read_file:requested" || toolStates[2] != "read_file:completed" {
		t.Fatalf("tool updates %v", toolStates)
	}
	task, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: id})
	if err != nil || task.Status.State != a2a.TaskStateCompleted || len(task.Artifacts) != 1 || task.ContextID != string(id) {
		t.Fatalf("get %+v %v", task, err)
	}

	// The second task: cancelled once its answer starts to stream.
	var second a2a.TaskID
	var final a2a.TaskState
	for ev, err := range c.SendStreamingMessage(ctx, a2aText("and again?")) {
		if err != nil {
			t.Fatal(err)
		}
		switch e := ev.(type) {
		case *a2a.Task:
			second = e.ID
		case *a2a.TaskArtifactUpdateEvent:
			if second != "" {
				if _, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: second}); err != nil {
					t.Fatal(err)
				}
				second = ""
			}
		case *a2a.TaskStatusUpdateEvent:
			final = e.Status.State
		}
	}
	if final != a2a.TaskStateCanceled {
		t.Fatalf("second task ended %s, want canceled", final)
	}
	var got []string
	for _, r := range gatewayRequests(t, n) {
		got = append(got, r.Method+":"+r.Result)
		if r.Gateway != "a2a" || r.Caller.Name != "a2a-test" || r.Target == "" {
			t.Fatalf("record %+v", r)
		}
	}
	// The second stream is recorded when it ends, which races the record
	// of the cancel that ends it: the records are compared as a set.
	wantRecs := []string{"message/stream:ok", "message/stream:ok", "tasks/cancel:ok", "tasks/get:ok"}
	slices.Sort(got)
	if len(got) != len(wantRecs) {
		t.Fatalf("records %v, want %v", got, wantRecs)
	}
	for i := range got {
		if got[i] != wantRecs[i] {
			t.Fatalf("records %v, want %v", got, wantRecs)
		}
	}
}

// TestA2AGatewayResubscribeAfterRestart: the node stops while a task's
// answer streams; after the restart a client resubscribes to the task and
// follows it to its end, read from the log.
func TestA2AGatewayResubscribeAfterRestart(t *testing.T) {
	dir := t.TempDir()
	n := startNode(t, dir)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := n.Projects().Open(ctx, projects.OpenRequest{Root: assistantProject(t, a2aScript, ""), ID: "p1"}); err != nil {
		t.Fatal(err)
	}
	srv := a2aGateway(t, n)
	c := a2aClient(t, ctx, srv.URL)
	var id a2a.TaskID
	for ev, err := range c.SendStreamingMessage(ctx, a2aText("what does a.txt say?")) {
		if err != nil {
			t.Fatal(err)
		}
		if task, ok := ev.(*a2a.Task); ok {
			id = task.ID
		}
		if _, ok := ev.(*a2a.TaskArtifactUpdateEvent); ok {
			break // the answer streams: stop the node now
		}
	}
	srv.Close()
	if err := n.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}

	n = startNode(t, dir)
	defer func() {
		if err := n.Shutdown(context.Background()); err != nil {
			t.Error(err)
		}
	}()
	c = a2aClient(t, ctx, a2aGateway(t, n).URL)
	var states []a2a.TaskState
	for ev, err := range c.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: id}) {
		if errors.Is(err, a2a.ErrUnsupportedOperation) {
			// The turn ended before the client came back: nothing left to
			// follow, and tasks/get below says how it ended.
			t.Log("the task ended before the resubscription")
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		switch e := ev.(type) {
		case *a2a.Task:
			states = append(states, e.Status.State)
		case *a2a.TaskStatusUpdateEvent:
			states = append(states, e.Status.State)
		}
	}
	task, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: id})
	if err != nil {
		t.Fatal(err)
	}
	if !task.Status.State.Terminal() || (len(states) > 0 && states[len(states)-1] != task.Status.State) {
		t.Fatalf("after the restart: followed %v, task %s", states, task.Status.State)
	}
	t.Logf("followed %v; the task ended %s", states, task.Status.State)
}

// TestA2ACardFollowsThePolicy: the agent card offers only what the
// project's policy lets run — a command whose tool the policy denies is
// not one of its skills — and its description names the tools that may
// run and not the denied ones.
func TestA2ACardFollowsThePolicy(t *testing.T) {
	n := startNode(t, t.TempDir())
	defer func() {
		if err := n.Shutdown(context.Background()); err != nil {
			t.Error(err)
		}
	}()
	root := t.TempDir()
	for name, body := range map[string]string{
		".jido/commands/review.md": "---\ndescription: Review a file.\n---\nReview $ARGUMENTS\n",
		".jido/commands/deploy.md": "---\ndescription: Deploy.\n---\nDeploy $ARGUMENTS\n",
	} {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	policy := json.RawMessage(`{"tools":{"*":"allow","command_deploy":"deny","write_file":"deny"}}`)
	if _, err := n.Projects().Open(ctx, projects.OpenRequest{Root: root, ID: "p1", Policy: policy}); err != nil {
		t.Fatal(err)
	}
	p, err := n.A2AHost().Project(ctx, "p1")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, s := range p.Skills {
		ids = append(ids, s.ID)
	}
	if !slices.Equal(ids, []string{"command_review"}) {
		t.Errorf("card skills %v, want command_review only (command_deploy is denied)", ids)
	}
	if !strings.Contains(p.Description, "read_file") || strings.Contains(p.Description, "write_file") || strings.Contains(p.Description, "command_") {
		t.Errorf("card description %q: want the allowed tools (read_file), not write_file, not the commands again", p.Description)
	}
}
