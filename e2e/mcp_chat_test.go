package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/jido-bus/jido-bus/internal/testkit"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMCPChat launches `jido-bus mcp --project PATH` with the scripted
// model, as an IDE would, and delegates a task with the chat tool: the
// assistant reads a file through the project's tools and answers; the
// answer carries the conversation's id, which continues it; the
// conversation and the requests are in the log after.
func TestMCPChat(t *testing.T) {
	proj := t.TempDir()
	for name, content := range map[string]string{
		"a.txt":              "hello world\n",
		".jido/config.yaml":  "llm: {provider: scripted, model: demo, script: .jido/script.jsonl}\n",
		".jido/script.jsonl": `{"tool_calls":[{"name":"read_file","args":{"path":"a.txt"}}]}` + "\n" + `{"text":"It says hello world."}` + "\n" + `{"text":"Still hello."}` + "\n",
	} {
		p := filepath.Join(proj, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	data := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.Command(tools.JidoBus, "mcp", "--project", proj, "--id", "ide", "--data-dir", data)
	var stderr testkit.Buffer
	cmd.Stderr = &stderr
	c := sdk.NewClient(&sdk.Implementation{Name: "e2e", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr.String())
	}
	chat := func(args map[string]any) (string, string) {
		t.Helper()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "chat", Arguments: args})
		if err != nil {
			t.Fatalf("chat: %v\n%s", err, stderr.String())
		}
		var out struct{ Conversation, State, Answer string }
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, &out); err != nil || res.IsError || out.State != "answered" {
			t.Fatalf("chat %v = %s %v\n%s", args, b, err, stderr.String())
		}
		return out.Conversation, out.Answer
	}
	conv, answer := chat(map[string]any{"message": "what does a.txt say?"})
	if answer != "It says hello world." {
		t.Fatalf("answer %q", answer)
	}
	if again, answer := chat(map[string]any{"message": "and now?", "conversation": conv}); again != conv || answer != "Still hello." {
		t.Fatalf("continued: %s %q", again, answer)
	}
	if err := cs.Close(); err != nil {
		t.Logf("close: %v", err) // the process exits when its stdin closes
	}

	out := tools.Run(t, "log", "show", "conversation/ide/"+conv, "--data-dir", data, "--output", "json")
	for _, want := range []string{`"by":"mcp:stdio"`, `"name":"read_file"`, "It says hello world.", "Still hello."} {
		if !strings.Contains(out, want) {
			t.Errorf("conversation/ide/%s lacks %s:\n%s", conv, want, out)
		}
	}
	out = tools.Run(t, "log", "show", "project/ide", "--data-dir", data, "--output", "json")
	if !strings.Contains(out, `"target":"chat:`+conv+`"`) {
		t.Errorf("project/ide's stream lacks the chat requests:\n%s", out)
	}
}

// TestMCPChatPerTokenThroughTheBinary: over a node's HTTP front door a
// token's chat is its own: another token of the project is told the
// conversation does not exist and puts nothing into it, the admin token
// may continue it, and the token that started it sees it as its A2A task.
func TestMCPChatPerTokenThroughTheBinary(t *testing.T) {
	t.Setenv("JIDO_E2E_CHAT_ADMIN", "e2e-chat-admin-token-01")
	t.Setenv("JIDO_E2E_CHAT_A", "e2e-chat-bot-a-token-02")
	t.Setenv("JIDO_E2E_CHAT_B", "e2e-chat-bot-b-token-03")
	proj := t.TempDir()
	writeProjectTree(t, proj, map[string]string{
		"a.txt":              "hello world\n",
		".jido/config.yaml":  "llm: {provider: scripted, model: demo, script: .jido/script.jsonl}\n",
		".jido/script.jsonl": `{"text":"first answer"}` + "\n" + `{"text":"later answer","repeat":true}` + "\n",
	})
	cfg := writeFile(t, "jido.yaml", `http:
  listen: 127.0.0.1:0
  token_env: JIDO_E2E_CHAT_ADMIN
  tokens:
    - {name: bot-a, env: JIDO_E2E_CHAT_A, project: p1}
    - {name: bot-b, env: JIDO_E2E_CHAT_B, project: p1}
`)
	node := StartNode(t, tools, t.TempDir(), "--config", cfg, "--open", proj+"=p1")
	base := httpBase(t, node)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	as := func(token string) *sdk.ClientSession {
		c := sdk.NewClient(&sdk.Implementation{Name: "e2e", Version: "1"}, nil)
		cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: base + "/mcp/p1", HTTPClient: &http.Client{Transport: bearer{token, http.DefaultTransport}}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cs.Close() })
		return cs
	}
	chat := func(cs *sdk.ClientSession, args map[string]any) (*sdk.CallToolResult, map[string]any) {
		t.Helper()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "chat", Arguments: args})
		if err != nil {
			t.Fatal(err)
		}
		out, _ := res.StructuredContent.(map[string]any)
		return res, out
	}
	res, out := chat(as("e2e-chat-bot-a-token-02"), map[string]any{"message": "my question"})
	if res.IsError || out["answer"] != "first answer" {
		t.Fatalf("bot-a's chat: %+v %+v", out, res.Content)
	}
	conv, _ := out["conversation"].(string)

	res, _ = chat(as("e2e-chat-bot-b-token-03"), map[string]any{"message": "bot-b was here", "conversation": conv})
	if text := res.Content[0].(*sdk.TextContent).Text; !res.IsError || !strings.Contains(text, "not_found") {
		t.Fatalf("bot-b continued bot-a's conversation: %s", text)
	}
	res, out = chat(as("e2e-chat-admin-token-01"), map[string]any{"message": "from the admin", "conversation": conv})
	if res.IsError || out["answer"] != "later answer" {
		t.Fatalf("the admin's chat: %+v %+v", out, res.Content)
	}

	task, err := a2aAs(t, ctx, base, "e2e-chat-bot-a-token-02").GetTask(ctx, &a2a.GetTaskRequest{ID: a2a.TaskID(conv)})
	if err != nil || task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("bot-a's chat as its A2A task: %+v %v", task, err)
	}
	log := tools.Run(t, "log", "show", "conversation/p1/"+conv, "-o", "json", "--nats-url", node.URL)
	if strings.Contains(log, "bot-b was here") || !strings.Contains(log, `"by":"http:bot-a"`) {
		t.Fatalf("conversation/p1/%s:\n%s", conv, log)
	}
}
