package mcp_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jido-bus/jido-bus/conversation"
	"github.com/jido-bus/jido-bus/eventlog"
)

// testMaxModes are the callers of chatEnv whose token the operator
// bounded (http.tokens max_mode).
var testMaxModes = map[string]string{"planbot": conversation.ModePlan}

// startedMode is the mode conversation.started of a1/conv records.
func startedMode(t *testing.T, e *env, conv string) (string, bool) {
	t.Helper()
	for en, err := range e.n.Log().ReadStream(conversation.Stream("a1/"+conv), eventlog.ReadOptions{Types: conversation.Started}) {
		if err != nil {
			return "", false
		}
		var d conversation.Data
		if err := json.Unmarshal(en.Event.Data(), &d); err != nil {
			t.Fatal(err)
		}
		return d.Mode, true
	}
	return "", false
}

// TestChatModeWithinTheToken: a caller whose token allows plan at most
// gets a plan conversation without asking (its write_file refused
// plan_mode), and asking for auto is refused forbidden with
// nothing started; another caller picks plan itself; a mode given to
// continue a conversation is refused (modes are chosen at start).
func TestChatModeWithinTheToken(t *testing.T) {
	e, url := chatEnv(t, `{"tool_calls":[{"name":"write_file","args":{"path":"b.txt","content":"x"}}]}
{"text":"I may not write here."}
{"text":"Planned."}
`, "")
	bot := chatClient(t, url, "planbot", nil, nil)
	res, out := chat(t, bot, map[string]any{"message": "write b.txt"}, nil)
	if res.IsError || out.State != "answered" || out.Answer != "I may not write here." {
		t.Fatalf("planbot's chat = %+v %+v", out, res.Content)
	}
	if m, _ := startedMode(t, e, out.Conversation); m != conversation.ModePlan {
		t.Fatalf("planbot's conversation started in mode %q, want plan (its token's)", m)
	}
	refused := false
	for en, err := range e.n.Log().ReadStream(conversation.Stream("a1/"+out.Conversation), eventlog.ReadOptions{Types: conversation.ToolFailed}) {
		if err != nil {
			t.Fatal(err)
		}
		refused = refused || strings.Contains(string(en.Event.Data()), `"plan_mode"`)
	}
	if !refused {
		t.Fatal("planbot's write_file was not refused plan_mode")
	}
	res, _ = chat(t, bot, map[string]any{"message": "write b.txt", "mode": "auto", "conversation": "loose"}, nil)
	if !res.IsError {
		t.Fatalf("a mode with conversation: %+v, want refused", res.Content)
	}
	res, _ = chat(t, bot, map[string]any{"message": "write b.txt", "mode": "auto"}, nil)
	if text := res.Content[0].(*sdk.TextContent).Text; !res.IsError || !strings.Contains(text, "forbidden") || !strings.Contains(text, "looser") {
		t.Fatalf("planbot asks for auto: %v %q, want forbidden", res.IsError, text)
	}
	alice := chatClient(t, url, "alice", nil, nil)
	res, out = chat(t, alice, map[string]any{"message": "plan it", "mode": "plan"}, nil)
	if res.IsError {
		t.Fatalf("alice asks for plan: %+v", res.Content)
	}
	if m, _ := startedMode(t, e, out.Conversation); m != conversation.ModePlan {
		t.Fatalf("alice's conversation started in mode %q, want plan", m)
	}
}

// TestToolCallsInTheTokensMode: a token bounded to plan calls the
// project's tools in plan too — read_file runs, write_file is refused
// plan_mode and writes nothing — while an unbounded token's write runs.
func TestToolCallsInTheTokensMode(t *testing.T) {
	_, url := chatEnv(t, `{"text":"unused"}`+"\n", "")
	call := func(caller, tool string, args map[string]any) *sdk.CallToolResult {
		t.Helper()
		res, err := chatClient(t, url, caller, nil, nil).CallTool(context.Background(), &sdk.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if res := call("planbot", "read_file", map[string]any{"path": "a.txt"}); res.IsError {
		t.Fatalf("planbot's read_file: %+v", res.Content)
	}
	res := call("planbot", "write_file", map[string]any{"path": "b.txt", "content": "x"})
	if text := res.Content[0].(*sdk.TextContent).Text; !res.IsError || !strings.Contains(text, "plan mode") {
		t.Fatalf("planbot's write_file: %v %q, want refused in plan mode", res.IsError, text)
	}
	if res := call("planbot", "read_file", map[string]any{"path": "b.txt"}); !res.IsError {
		t.Fatal("planbot's refused write_file wrote b.txt")
	}
	if res := call("alice", "write_file", map[string]any{"path": "b.txt", "content": "x"}); res.IsError {
		t.Fatalf("alice's write_file: %+v", res.Content)
	}
}
