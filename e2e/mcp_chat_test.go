package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
	var stderr syncBuffer
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
