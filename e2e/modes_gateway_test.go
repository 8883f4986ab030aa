package e2e

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestModesPerTokenThroughTheBinary: a token the operator bounded to
// plan (http.tokens max_mode) chats over the node's MCP gateway in plan
// without asking — the model's write_file is refused plan_mode and no
// file is written — and is refused auto, by MCP chat and by A2A's
// metadata jido.mode, with nothing started; the operator's own token
// picks plan through A2A. Its direct MCP tool calls are held to plan
// too. Both conversations replay with --verify.
func TestModesPerTokenThroughTheBinary(t *testing.T) {
	t.Setenv("JIDO_E2E_MODE_ADMIN", "e2e-mode-admin-token-01")
	t.Setenv("JIDO_E2E_MODE_BOT", "e2e-mode-bot-token-02")
	proj := t.TempDir()
	writeProjectTree(t, proj, map[string]string{
		"a.txt":              "hello\n",
		".jido/config.yaml":  "llm: {provider: scripted, model: demo, script: .jido/script.jsonl}\n",
		".jido/script.jsonl": `{"tool_calls":[{"name":"write_file","args":{"path":"b.txt","content":"x"}}]}` + "\n" + `{"text":"planned only","repeat":true}` + "\n",
	})
	cfg := writeFile(t, "jido.yaml", `http:
  listen: 127.0.0.1:0
  token_env: JIDO_E2E_MODE_ADMIN
  tokens:
    - {name: bot, env: JIDO_E2E_MODE_BOT, project: p1, max_mode: plan}
`)
	node := StartNode(t, tools, t.TempDir(), "--config", cfg, "--open", proj+"=p1")
	base := httpBase(t, node)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	c := sdk.NewClient(&sdk.Implementation{Name: "e2e", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: base + "/mcp/p1", HTTPClient: &http.Client{Transport: bearer{"e2e-mode-bot-token-02", http.DefaultTransport}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	chat := func(args map[string]any) (*sdk.CallToolResult, map[string]any) {
		t.Helper()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "chat", Arguments: args})
		if err != nil {
			t.Fatal(err)
		}
		out, _ := res.StructuredContent.(map[string]any)
		return res, out
	}
	res, out := chat(map[string]any{"message": "write b.txt"})
	if res.IsError || out["answer"] != "planned only" {
		t.Fatalf("bot's chat: %+v %+v", out, res.Content)
	}
	conv, _ := out["conversation"].(string)
	if _, err := os.Stat(filepath.Join(proj, "b.txt")); !os.IsNotExist(err) {
		t.Fatalf("b.txt after a plan-mode chat: %v", err)
	}
	log := tools.Run(t, "log", "show", "conversation/p1/"+conv, "-o", "json", "--nats-url", node.URL)
	if !strings.Contains(log, `"mode":"plan"`) || !strings.Contains(log, `"plan_mode"`) {
		t.Fatalf("conversation/p1/%s does not start in plan or refuse the write:\n%s", conv, log)
	}
	// Its direct tool calls are held to the same mode.
	direct, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "write_file", Arguments: map[string]any{"path": "b.txt", "content": "x"}})
	if err != nil || !direct.IsError {
		t.Fatalf("bot's direct write_file: %+v %v, want refused", direct, err)
	}
	if _, err := os.Stat(filepath.Join(proj, "b.txt")); !os.IsNotExist(err) {
		t.Fatalf("b.txt after bot's direct write_file: %v", err)
	}
	res, _ = chat(map[string]any{"message": "write b.txt", "mode": "auto"})
	if text := res.Content[0].(*sdk.TextContent).Text; !res.IsError || !strings.Contains(text, "looser") {
		t.Fatalf("bot's chat in auto: %q, want refused", text)
	}

	msg := func(ctxID, mode string) *a2a.SendMessageRequest {
		m := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("write b.txt"))
		m.ContextID, m.Metadata = ctxID, map[string]any{"jido.mode": mode}
		return &a2a.SendMessageRequest{Message: m, Config: &a2a.SendMessageConfig{ReturnImmediately: true}}
	}
	if _, err := a2aAs(t, ctx, base, "e2e-mode-bot-token-02").SendMessage(ctx, msg("loose", "auto")); !errors.Is(err, a2a.ErrInvalidParams) {
		t.Fatalf("bot's A2A message in auto: %v, want invalid params", err)
	}
	if out, _, err := tryRun("log", "show", "conversation/p1/loose", "--nats-url", node.URL); err == nil && strings.Contains(out, "conversation.started") {
		t.Fatalf("a refused A2A context was started:\n%s", out)
	}
	if _, err := a2aAs(t, ctx, base, "e2e-mode-admin-token-01").SendMessage(ctx, msg("ops", "plan")); err != nil {
		t.Fatal(err)
	}
	rig := &assistantRig{t: t, node: node}
	es := rig.await(t, "p1/ops", "the admin's plan context answered", func(es convEvents) bool {
		return es.has("conversation.assistant.message", "planned only")
	})
	if !es.has("conversation.started", `"mode":"plan"`) || !es.has("conversation.tool.failed", `"plan_mode"`) {
		t.Fatalf("the admin's A2A context is not in plan:\n%s", es)
	}
	rig.replayVerifies(t, "p1/"+conv)
	rig.replayVerifies(t, "p1/ops")
}
