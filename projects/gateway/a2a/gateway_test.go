package a2a

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	sdk "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"

	"github.com/jido-bus/jido-bus/internal/testkit"
	"github.com/jido-bus/jido-bus/projects/gateway"
)

// serve starts the gateway of h on an httptest server, as the front door
// mounts it (with a caller in the context).
func serve(t *testing.T, h Host, o Options) *httptest.Server {
	t.Helper()
	g := New(h, o)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.Handler().ServeHTTP(w, r.WithContext(gateway.WithCaller(r.Context(), gateway.Caller{Name: "tester", Remote: r.RemoteAddr})))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// client fetches project's card with the SDK's resolver and makes the
// SDK's client from it.
func client(t *testing.T, ctx context.Context, base, project string) (*a2aclient.Client, *sdk.AgentCard) {
	t.Helper()
	card, err := agentcard.DefaultResolver.Resolve(ctx, base+"/a2a/"+project)
	if err != nil {
		t.Fatal(err)
	}
	c, err := a2aclient.NewFromCard(ctx, card)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Destroy() })
	return c, card
}

func userText(text string) *sdk.SendMessageRequest {
	return &sdk.SendMessageRequest{Message: sdk.NewMessage(sdk.MessageRoleUser, sdk.NewTextPart(text))}
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// serveAnonymous starts the gateway of h with no caller in the requests'
// contexts, as the front door lets a public request in without a token.
func serveAnonymous(t *testing.T, h Host, o Options) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(New(h, o).Handler())
	t.Cleanup(srv.Close)
	return srv
}

// TestCard: the card names the project, lists its skills by their tool
// names, says streaming, and points at /a2a/{project}/ on BaseURL (the
// trailing slash makes .well-known/agent-card.json relative to it the
// card); with bearer auth it declares the scheme in the forms of both
// protocol versions. Read without a caller where a token is needed, it
// lists no skills and says an extended card has them.
func TestCard(t *testing.T) {
	ctx := testCtx(t)
	h := newFakeHost("p1")
	for _, tc := range []struct {
		name   string
		srv    *httptest.Server
		skills int
	}{
		{"with a caller", serve(t, h, Options{BaseURL: "http://gw.example:8080/", BearerAuth: true}), 1},
		{"without a caller", serveAnonymous(t, h, Options{BaseURL: "http://gw.example:8080/", BearerAuth: true}), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, url := range []string{tc.srv.URL + "/a2a/p1", tc.srv.URL + "/a2a/p1/"} {
				card, err := agentcard.DefaultResolver.Resolve(ctx, url)
				if err != nil {
					t.Fatal(err)
				}
				if card.Name != "p1" || !card.Capabilities.Streaming || card.Capabilities.PushNotifications || !card.Capabilities.ExtendedAgentCard {
					t.Fatalf("card %+v", card)
				}
				if len(card.Skills) != tc.skills || tc.skills > 0 && (card.Skills[0].ID != "command_review" || card.Skills[0].Tags[0] != "command") {
					t.Fatalf("skills %+v, want %d", card.Skills, tc.skills)
				}
				if got := card.SupportedInterfaces[0].URL; got != "http://gw.example:8080/a2a/p1/" {
					t.Fatalf("url %s", got)
				}
				if _, ok := card.SecuritySchemes[BearerScheme]; !ok || len(card.SecurityRequirements) != 1 {
					t.Fatalf("security %+v %+v", card.SecuritySchemes, card.SecurityRequirements)
				}
			}
			// A 0.3 client reads the card's security with the SDK's 0.3
			// parser, which reads the 0.3 form (type) first.
			resp, err := http.Get(tc.srv.URL + "/a2a/p1/.well-known/agent-card.json")
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			var fields struct {
				SecuritySchemes map[string]map[string]any `json:"securitySchemes"`
			}
			if err := json.Unmarshal(raw, &fields); err != nil {
				t.Fatal(err)
			}
			if b := fields.SecuritySchemes[BearerScheme]; b["type"] != "http" || b["scheme"] != "Bearer" || b["httpAuthSecurityScheme"] == nil || b["http"] != nil {
				t.Fatalf("the bearer scheme %v: want the 0.3 form and the 1.0 form side by side", b)
			}
			v03, err := a2av0.NewAgentCardParser()(raw)
			if err != nil {
				t.Fatal(err)
			}
			if s, ok := v03.SecuritySchemes[BearerScheme].(sdk.HTTPAuthSecurityScheme); !ok || s.Scheme != "Bearer" {
				t.Fatalf("the 0.3 parser reads the bearer scheme as %#v", v03.SecuritySchemes[BearerScheme])
			}
		})
	}
	// The extended card, behind the token, lists the skills.
	c, _ := client(t, ctx, serve(t, h, Options{BearerAuth: true}).URL, "p1")
	card, err := c.GetExtendedAgentCard(ctx, &sdk.GetExtendedAgentCardRequest{})
	if err != nil || len(card.Skills) != 1 || card.Skills[0].ID != "command_review" {
		t.Fatalf("the extended card: %+v %v", card, err)
	}
	// Unknown project: 404, and the gateway goes on serving.
	srv := serve(t, h, Options{})
	if _, err := agentcard.DefaultResolver.Resolve(ctx, srv.URL+"/a2a/nope"); err == nil {
		t.Fatal("card of an unknown project served")
	} else if se, ok := errors.AsType[*agentcard.ErrStatusNotOK](err); !ok || se.StatusCode != http.StatusNotFound {
		t.Fatalf("unknown project: %v, want 404", err)
	}
	// Without a caller, the 404 says no more than that.
	resp, err := http.Get(serveAnonymous(t, h, Options{BearerAuth: true}).URL + "/a2a/nope/.well-known/agent-card.json")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound || strings.Contains(string(b), "is not open") {
		t.Fatalf("an unknown project's card without a caller: %d %s, want a bare 404", resp.StatusCode, b)
	}
	// Where a client given /a2a/p1 without its slash looks: told where
	// the card is.
	resp, err = http.Get(srv.URL + "/a2a/.well-known/agent-card.json")
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound || !strings.Contains(string(b), `.well-known/agent-card.json`) {
		t.Fatalf("the misplaced card: %d %s", resp.StatusCode, b)
	}
}

// TestSendStreamGetCancel: the SDK's client sends a message and gets the
// completed task with the answer; streams another and sees the tool call
// and the answer artifact; gets the task; cancels a held one. Every
// request is recorded.
func TestSendStreamGetCancel(t *testing.T) {
	ctx := testCtx(t)
	h := newFakeHost("p1")
	srv := serve(t, h, Options{})
	c, _ := client(t, ctx, srv.URL, "p1")

	res, err := c.SendMessage(ctx, userText("read a.txt"))
	if err != nil {
		t.Fatal(err)
	}
	task, ok := res.(*sdk.Task)
	if !ok || task.Status.State != sdk.TaskStateCompleted || task.ContextID != string(task.ID) {
		t.Fatalf("send: %#v", res)
	}
	if len(task.Artifacts) != 2 || task.Artifacts[0].Parts[0].Text() != fakeStep || task.Artifacts[1].Parts[0].Text() != fakeAnswer {
		t.Fatalf("artifacts %+v", task.Artifacts)
	}

	var sawTool, sawAnswer bool
	var last sdk.TaskState
	var streamID sdk.TaskID
	for ev, err := range c.SendStreamingMessage(ctx, userText("again")) {
		if err != nil {
			t.Fatal(err)
		}
		switch e := ev.(type) {
		case *sdk.Task:
			streamID = e.ID
		case *sdk.TaskStatusUpdateEvent:
			last = e.Status.State
			if e.Status.Message != nil && len(e.Status.Message.Parts) > 0 {
				if d, ok := e.Status.Message.Parts[0].Data().(map[string]any); ok && d["tool_call"] != nil {
					sawTool = true
				}
			}
		case *sdk.TaskArtifactUpdateEvent:
			sawAnswer = sawAnswer || e.LastChunk || strings.HasSuffix(fakeAnswer, e.Artifact.Parts[0].Text())
		}
	}
	if !sawTool || !sawAnswer || last != sdk.TaskStateCompleted || streamID == "" {
		t.Fatalf("stream: tool %v answer %v last %s id %q", sawTool, sawAnswer, last, streamID)
	}

	got, err := c.GetTask(ctx, &sdk.GetTaskRequest{ID: task.ID})
	if err != nil || got.Status.State != sdk.TaskStateCompleted || len(got.History) != 3 {
		t.Fatalf("get: %+v %v", got, err)
	}

	res, err = c.SendMessage(ctx, &sdk.SendMessageRequest{Message: sdk.NewMessage(sdk.MessageRoleUser, sdk.NewTextPart("hold on")), Config: &sdk.SendMessageConfig{ReturnImmediately: true}})
	if err != nil {
		t.Fatal(err)
	}
	held := res.(*sdk.Task)
	canceled, err := c.CancelTask(ctx, &sdk.CancelTaskRequest{ID: held.ID})
	if err != nil || canceled.Status.State != sdk.TaskStateCanceled {
		t.Fatalf("cancel: %+v %v", canceled, err)
	}
	if _, err := c.CancelTask(ctx, &sdk.CancelTaskRequest{ID: held.ID}); !errors.Is(err, sdk.ErrTaskNotCancelable) {
		t.Fatalf("cancel twice: %v, want task not cancelable", err)
	}

	want := []string{MethodSend + " ok", MethodStream + " ok", MethodGet + " ok", MethodSend + " ok", MethodCancel + " ok", MethodCancel + " not_cancelable"}
	recs := h.recorded()
	if len(recs) != len(want) {
		t.Fatalf("records %+v", recs)
	}
	for i, r := range recs {
		if r.Method+" "+r.Result != want[i] || r.Caller.Name != "tester" || r.Gateway != "a2a" || r.Target == "" {
			t.Fatalf("record %d %+v, want %s", i, r, want[i])
		}
	}
}

// TestBadInput: an unknown task, a malformed body, an unknown method and
// an unknown project each get a protocol-correct error, are recorded
// when they reached the project, and the gateway answers after them.
func TestBadInput(t *testing.T) {
	ctx := testCtx(t)
	h := newFakeHost("p1")
	srv := serve(t, h, Options{})
	c, _ := client(t, ctx, srv.URL, "p1")

	if _, err := c.GetTask(ctx, &sdk.GetTaskRequest{ID: "nosuch"}); !errors.Is(err, sdk.ErrTaskNotFound) {
		t.Fatalf("get unknown: %v", err)
	}
	if _, err := c.GetTask(ctx, &sdk.GetTaskRequest{ID: "../x"}); !errors.Is(err, sdk.ErrInvalidParams) {
		t.Fatalf("get bad id: %v", err)
	}
	if _, err := c.SendMessage(ctx, &sdk.SendMessageRequest{Message: &sdk.Message{ID: "m", Role: sdk.MessageRoleUser, TaskID: "nosuch", Parts: sdk.ContentParts{sdk.NewTextPart("x")}}}); !errors.Is(err, sdk.ErrTaskNotFound) {
		t.Fatalf("send to unknown task: %v", err)
	}
	for _, body := range []string{`{not json`, `{"jsonrpc":"2.0","id":1,"method":"NoSuchMethod"}`, `{"jsonrpc":"2.0","id":2,"method":"message/nosuch"}`} {
		resp, err := http.Post(srv.URL+"/a2a/p1", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(string(b), `"error"`) || !strings.Contains(string(b), `"code":-32`) {
			t.Fatalf("%s: %d %s, want a JSON-RPC error", body, resp.StatusCode, b)
		}
	}
	resp, err := http.Post(srv.URL+"/a2a/nope", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("unknown project: %d", resp.StatusCode)
	}
	results := map[string]int{}
	for _, r := range h.recorded() {
		results[r.Result]++
	}
	if results["not_found"] != 2 || results["invalid_request"] != 3 || results["malformed"] != 1 {
		t.Fatalf("records %+v", h.recorded())
	}
	// Still serving.
	if _, err := c.SendMessage(ctx, userText("still there?")); err != nil {
		t.Fatal(err)
	}
}

// TestStreamClientGoesAway: a client that leaves mid-stream is recorded
// disconnected, the turn goes on, and resubscribing follows the task.
func TestStreamClientGoesAway(t *testing.T) {
	ctx := testCtx(t)
	h := newFakeHost("p1")
	srv := serve(t, h, Options{})
	c, _ := client(t, ctx, srv.URL, "p1")
	sctx, leave := context.WithCancel(ctx)
	var id sdk.TaskID
	for ev, err := range c.SendStreamingMessage(sctx, userText("hold it")) {
		if err != nil {
			t.Fatal(err)
		}
		id = ev.(*sdk.Task).ID
		break
	}
	leave()
	testkit.EventuallyNil(t, "the stream recorded disconnected", func() error {
		if recs := h.recorded(); len(recs) != 1 || recs[0].Result != ResultDisconnected || recs[0].Method != MethodStream {
			return fmt.Errorf("records %+v", recs)
		}
		return nil
	})
	// The task still runs; resubscribe, then cancel it from another call.
	events := c.SubscribeToTask(ctx, &sdk.SubscribeToTaskRequest{ID: id})
	var states []sdk.TaskState
	for ev, err := range events {
		if err != nil {
			t.Fatal(err)
		}
		switch e := ev.(type) {
		case *sdk.Task:
			states = append(states, e.Status.State)
			if _, err := c.CancelTask(ctx, &sdk.CancelTaskRequest{ID: id}); err != nil {
				t.Fatal(err)
			}
		case *sdk.TaskStatusUpdateEvent:
			states = append(states, e.Status.State)
		}
	}
	if len(states) != 2 || states[0] != sdk.TaskStateWorking || states[1] != sdk.TaskStateCanceled {
		t.Fatalf("resubscribe states %v", states)
	}
	if _, err := func() (sdk.Event, error) {
		for ev, err := range c.SubscribeToTask(ctx, &sdk.SubscribeToTaskRequest{ID: id}) {
			return ev, err
		}
		return nil, nil
	}(); !errors.Is(err, sdk.ErrUnsupportedOperation) {
		t.Fatalf("resubscribe to an ended task: %v", err)
	}
}

// TestV03Client: a client speaking A2A 0.3 (the SDK's compatibility
// transport, methods message/send, tasks/get) is served on the same URL.
func TestV03Client(t *testing.T) {
	ctx := testCtx(t)
	h := newFakeHost("p1")
	srv := serve(t, h, Options{})
	card, err := agentcard.DefaultResolver.Resolve(ctx, srv.URL+"/a2a/p1")
	if err != nil {
		t.Fatal(err)
	}
	var v0 *sdk.AgentInterface
	for _, i := range card.SupportedInterfaces {
		if i.ProtocolVersion == a2av0.Version {
			v0 = i
		}
	}
	if v0 == nil {
		t.Fatalf("card lists no 0.3 interface: %+v", card.SupportedInterfaces)
	}
	c, err := a2aclient.NewFromEndpoints(ctx, []*sdk.AgentInterface{v0}, a2av0.WithJSONRPCTransport(a2av0.JSONRPCTransportConfig{}))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Destroy() }()
	res, err := c.SendMessage(ctx, userText("read a.txt"))
	if err != nil {
		t.Fatal(err)
	}
	task, ok := res.(*sdk.Task)
	if !ok || task.Status.State != sdk.TaskStateCompleted {
		t.Fatalf("0.3 send: %#v", res)
	}
	if got, err := c.GetTask(ctx, &sdk.GetTaskRequest{ID: task.ID}); err != nil || got.Status.State != sdk.TaskStateCompleted {
		t.Fatalf("0.3 get: %+v %v", got, err)
	}
	recs := h.recorded()
	if len(recs) != 2 || recs[0].Method != MethodSend || recs[0].Result != "ok" {
		t.Fatalf("records %+v", recs)
	}
}

// TestOversizedBody: a body over Options.MaxBodyBytes is refused 413
// before the SDK reads it; a GET on the endpoint is 405.
func TestOversizedBody(t *testing.T) {
	srv := serve(t, newFakeHost("p1"), Options{MaxBodyBytes: 64})
	resp, err := http.Post(srv.URL+"/a2a/p1", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"parts":[{"text":"`+strings.Repeat("x", 100)+`"}]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("oversized: %d", resp.StatusCode)
	}
	resp, err = http.Get(srv.URL + "/a2a/p1")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("GET: %d", resp.StatusCode)
	}
}
