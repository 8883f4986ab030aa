package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jido-bus/jido-bus/internal/testkit"
	"github.com/jido-bus/jido-bus/projects"
	"github.com/jido-bus/jido-bus/projects/gateway"
	mcpgw "github.com/jido-bus/jido-bus/projects/gateway/mcp"
)

// chatEnv opens project "a1" playing script with the scripted model, and
// serves the gateway with the caller named by the request's X-Test-Caller
// header ("admin" is an admin), as the front door would.
func chatEnv(t *testing.T, script, policy string) (*env, string) {
	t.Helper()
	e := start(t)
	root := t.TempDir()
	files := map[string]string{
		"a.txt":              "hello world\n",
		".jido/script.jsonl": script,
		".jido/config.yaml":  "llm: {provider: scripted, model: demo, script: .jido/script.jsonl}\n",
	}
	if policy != "" {
		files[".jido/policy.yaml"] = policy
	}
	writeFiles(t, root, files)
	if _, err := e.n.Projects().Open(context.Background(), projects.OpenRequest{Root: root, ID: "a1"}); err != nil {
		t.Fatal(err)
	}
	h := e.g.Handler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := r.Header.Get("X-Test-Caller")
		if name == "" {
			name = "alice"
		}
		h.ServeHTTP(w, r.WithContext(gateway.WithCaller(r.Context(), gateway.Caller{Name: name, Admin: name == "admin", MaxMode: testMaxModes[name]})))
	}))
	t.Cleanup(srv.Close)
	return e, srv.URL
}

type callerHeader struct {
	name string
	rt   http.RoundTripper
}

func (c callerHeader) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Test-Caller", c.name)
	return c.rt.RoundTrip(r)
}

// chatClient connects to url's /mcp/a1 as caller, collecting the progress
// notifications it receives.
func chatClient(t *testing.T, url, caller string, progress *[]string, mu *sync.Mutex) *sdk.ClientSession {
	t.Helper()
	opts := &sdk.ClientOptions{ProgressNotificationHandler: func(_ context.Context, r *sdk.ProgressNotificationClientRequest) {
		if progress != nil {
			mu.Lock()
			*progress = append(*progress, r.Params.Message)
			mu.Unlock()
		}
	}}
	c := sdk.NewClient(&sdk.Implementation{Name: "chat-client", Version: "1"}, opts)
	cs, err := c.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: url + "/mcp/a1",
		HTTPClient: &http.Client{Transport: callerHeader{name: caller, rt: http.DefaultTransport}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

type chatResult struct {
	Conversation, State, Answer string
}

func chat(t *testing.T, cs *sdk.ClientSession, args map[string]any, token any) (*sdk.CallToolResult, chatResult) {
	t.Helper()
	p := &sdk.CallToolParams{Name: "chat", Arguments: args}
	if token != nil {
		p.SetProgressToken(token)
	}
	res, err := cs.CallTool(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	var out chatResult
	if res.StructuredContent != nil {
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatal(err)
		}
	}
	return res, out
}

// TestChatDelegatesToTheAssistant: chat starts a conversation, the scripted
// model reads a file through the project's tools and answers; the answer
// is the result's text with the conversation's id, the deltas and the
// tool step came as progress notifications with the client's token, the
// conversation can be continued with its id, and each call is recorded.
func TestChatDelegatesToTheAssistant(t *testing.T) {
	e, url := chatEnv(t, `{"tool_calls":[{"name":"read_file","args":{"path":"a.txt"}}]}
{"text":"The file says hello world.","chunk":5,"delay_ms":20}
{"text":"Second answer."}
`, "")
	var mu sync.Mutex
	var progress []string
	cs := chatClient(t, url, "alice", &progress, &mu)
	res, out := chat(t, cs, map[string]any{"message": "what does a.txt say?"}, "tok-1")
	if res.IsError || out.State != "answered" || out.Answer != "The file says hello world." || out.Conversation == "" {
		t.Fatalf("chat = %+v %+v", out, res.Content)
	}
	if text := res.Content[0].(*sdk.TextContent).Text; text != out.Answer {
		t.Fatalf("text %q, want the answer", text)
	}
	// The client hands notifications to its handler on a goroutine of
	// their own: they may be handled after the result. (Deltas are
	// best-effort, never logged: the model streams slowly enough here
	// that its first ones come before its answer is committed.)
	testkit.EventuallyNil(t, "the tool step and the answer's deltas as progress notifications", func() error {
		mu.Lock()
		got := strings.Join(progress, "|")
		mu.Unlock()
		if !strings.Contains(got, "[calling read_file]") || !strings.Contains(got, "The f|ile s") {
			return fmt.Errorf("got %q", got)
		}
		return nil
	})
	res, again := chat(t, cs, map[string]any{"message": "and again?", "conversation": out.Conversation}, nil)
	if res.IsError || again.Answer != "Second answer." || again.Conversation != out.Conversation {
		t.Fatalf("continued chat = %+v %+v", again, res.Content)
	}
	r := findRecord(t, e.n, "a1", "tools/call", "chat:"+out.Conversation)
	if r.Result != "ok" || r.Caller.Name != "alice" {
		t.Fatalf("record %+v", r)
	}
}

// TestChatIsTheCallersOwn: another caller cannot continue a conversation
// it did not start (it is as one never started, and nothing goes into
// it); an admin can.
func TestChatIsTheCallersOwn(t *testing.T) {
	e, url := chatEnv(t, `{"text":"one"}
{"text":"two","repeat":true}
`, "")
	_, out := chat(t, chatClient(t, url, "alice", nil, nil), map[string]any{"message": "hi"}, nil)
	if out.State != "answered" {
		t.Fatalf("chat = %+v", out)
	}
	res, _ := chat(t, chatClient(t, url, "mallory", nil, nil), map[string]any{"message": "leak it", "conversation": out.Conversation}, nil)
	if typ, msg := errorOf(t, res); typ != "not_found" || !strings.Contains(msg, "leave conversation out") {
		t.Fatalf("another's conversation: %s %s", typ, msg)
	}
	events, err := e.n.Conversations().Events(context.Background(), "a1/"+out.Conversation)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range events {
		if strings.Contains(ev.Data.Text, "leak it") {
			t.Fatalf("mallory's message went into alice's conversation")
		}
	}
	if r := findRecord(t, e.n, "a1", "tools/call", "chat:"+out.Conversation); r.Result != "not_found" || r.Caller.Name != "mallory" {
		t.Fatalf("record %+v", r)
	}
	res, admin := chat(t, chatClient(t, url, "admin", nil, nil), map[string]any{"message": "as admin", "conversation": out.Conversation}, nil)
	if res.IsError || admin.Answer != "two" {
		t.Fatalf("admin's chat = %+v %+v", admin, res.Content)
	}
}

// TestChatWaitIsBounded: past wait_seconds chat answers with what was
// written so far, state working and the conversation's id; the turn goes
// on, and chat with the id reads its next answer.
func TestChatWaitIsBounded(t *testing.T) {
	_, url := chatEnv(t, `{"text":"`+strings.Repeat("slow ", 40)+`","chunk":5,"delay_ms":100}
{"text":"next"}
`, "")
	cs := chatClient(t, url, "alice", nil, nil)
	res, out := chat(t, cs, map[string]any{"message": "take your time", "wait_seconds": 1}, nil)
	if res.IsError || out.State != "working" || out.Conversation == "" {
		t.Fatalf("chat = %+v %+v", out, res.Content)
	}
	if text := res.Content[0].(*sdk.TextContent).Text; !strings.Contains(text, `"conversation": "`+out.Conversation+`"`) {
		t.Fatalf("text %q does not say how to continue", text)
	}
	res, next := chat(t, cs, map[string]any{"message": "and then?", "conversation": out.Conversation}, nil)
	if res.IsError || next.Answer != "next" {
		t.Fatalf("continued chat = %+v %+v", next, res.Content)
	}
}

// TestChatWaitsForApproval: a tool the policy says ask about stops the
// wait with state awaiting_approval and the command that approves it.
func TestChatWaitsForApproval(t *testing.T) {
	_, url := chatEnv(t, `{"tool_calls":[{"id":"w1","name":"write_file","args":{"path":"b.txt","content":"x"}}]}
{"text":"done"}
`, "tools:\n  \"*\": allow\n  write_file: ask\n")
	res, out := chat(t, chatClient(t, url, "alice", nil, nil), map[string]any{"message": "write b.txt"}, nil)
	if res.IsError || out.State != "awaiting_approval" || !strings.Contains(out.Answer, "jido-bus conv approve a1/"+out.Conversation) {
		t.Fatalf("chat = %+v", out)
	}
}

// TestChatWithoutAModel: a project without a model provider answers chat
// with an error that says where to configure one.
func TestChatWithoutAModel(t *testing.T) {
	e := start(t)
	cs := e.connect(t, "/mcp/p1", nil)
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "chat", Arguments: map[string]any{"message": "hi"}})
	if err != nil {
		t.Fatal(err)
	}
	text := res.Content[0].(*sdk.TextContent).Text
	if !res.IsError || !strings.Contains(text, ".jido/config.yaml") || !strings.Contains(text, "provider") {
		t.Fatalf("chat without a model = %v %q", res.IsError, text)
	}
}

// TestChatArguments: a call without a message, or with a wait out of
// bounds, is refused before anything starts.
func TestChatArguments(t *testing.T) {
	e := start(t)
	cs := e.connect(t, "/mcp/p1", nil)
	for _, args := range []map[string]any{{"message": " "}, {"message": "x", "wait_seconds": 601}} {
		res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "chat", Arguments: args})
		if err != nil {
			t.Fatal(err)
		}
		if typ, _ := errorOf(t, res); typ != "invalid_request" {
			t.Fatalf("%v: %s", args, typ)
		}
	}
	if r := findRecord(t, e.n, "p1", "tools/call", "chat"); r.Result != "invalid_request" {
		t.Fatalf("record %+v", r)
	}
}

// TestChatOnEveryProject: on /mcp the chat tool of project P is P.chat.
func TestChatOnEveryProject(t *testing.T) {
	_, url := chatEnv(t, `{"text":"from a1"}
`, "")
	c := sdk.NewClient(&sdk.Implementation{Name: "chat-client", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: url + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cs.Close() }()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "a1." + mcpgw.ChatTool, Arguments: map[string]any{"message": "hi"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || res.Content[0].(*sdk.TextContent).Text != "from a1" {
		t.Fatalf("a1.chat = %+v", res.Content)
	}
}

// TestChatClientGoesAway: a client that cancels its chat mid-answer
// leaves the conversation going on — its answer is committed in the log
// all the same — and the request recorded as cancelled, with the
// conversation's id.
func TestChatClientGoesAway(t *testing.T) {
	e, url := chatEnv(t, `{"text":"`+strings.Repeat("long ", 20)+`","chunk":5,"delay_ms":50}
`, "")
	started := make(chan struct{})
	var once sync.Once
	c := sdk.NewClient(&sdk.Implementation{Name: "chat-client", Version: "1"}, &sdk.ClientOptions{
		ProgressNotificationHandler: func(context.Context, *sdk.ProgressNotificationClientRequest) { once.Do(func() { close(started) }) },
	})
	cs, err := c.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: url + "/mcp/a1"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cs.Close() }()
	ctx, cancel := context.WithCancel(context.Background())
	p := &sdk.CallToolParams{Name: "chat", Arguments: map[string]any{"message": "write a lot"}}
	p.SetProgressToken("t")
	errc := make(chan error, 1)
	go func() { _, err := cs.CallTool(ctx, p); errc <- err }()
	<-started
	cancel()
	if err := <-errc; err == nil {
		t.Fatal("a cancelled call returned no error")
	}
	var conv string
	testkit.EventuallyNil(t, "the cancelled chat's record", func() error {
		for _, r := range records(t, e.n, "a1") {
			if strings.HasPrefix(r.Target, "chat:") {
				if r.Result != "cancelled" || !strings.Contains(r.Error, "goes on") {
					return fmt.Errorf("record %+v", r)
				}
				conv = strings.TrimPrefix(r.Target, "chat:")
				return nil
			}
		}
		return fmt.Errorf("no record yet")
	})
	testkit.EventuallyNil(t, "the answer committed after the client left", func() error {
		events, err := e.n.Conversations().Events(context.Background(), "a1/"+conv)
		if err != nil {
			return err
		}
		for _, ev := range events {
			if ev.Type == "conversation.assistant.message" && strings.HasPrefix(ev.Data.Text, "long long") {
				return nil
			}
		}
		return fmt.Errorf("%d events, no answer", len(events))
	})
}
