package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestChatView: each event as conv chat prints it, in order, the view
// ending streamed text's line before anything else is printed.
func TestChatView(t *testing.T) {
	var v chatView
	var out strings.Builder
	ends := 0
	for _, ev := range []struct{ typ, data string }{
		{"conversation.user.message", `{"text":"hi"}`},
		{"conversation.assistant.delta", `{"text":"Let me "}`},
		{"conversation.assistant.delta", `{"text":"look."}`},
		{"conversation.tool.requested", `{"call_id":"k1","name":"read_file","args":{"path": "a.go"}}`},
		{"conversation.assistant.message", `{"text":"Let me look.","tool_calls":2}`},
		{"conversation.tool.completed", `{"call_id":"k1","output_ref":{"id":"x","size":1229}}`},
		{"conversation.tool.requested", `{"call_id":"k2","name":"edit_file","args_error":"unexpected end of JSON input"}`},
		{"conversation.tool.failed", `{"call_id":"k2","error":{"type":"outside_root","message":"../x is outside the project"}}`},
		{"conversation.tool.approval", `{"call_id":"k3","decision":"deny","reason":"timeout"}`},
		{"conversation.llm.failed", `{"error":{"type":"rate_limited","message":"slow down"},"retry_in_ms":2000}`},
		{"conversation.llm.failed", `{"error":{"type":"interrupted","message":"the node restarted"}}`},
		{"conversation.tool.completed", `{"call_id":"k4","output":"ok"}`},
		{"conversation.assistant.message", `{"text":"Done.","tool_calls":0}`},
		{"conversation.llm.failed", `{"error":{"type":"auth","message":"401: set OPENAI_API_KEY"}}`},
		{"conversation.cancel", `{"reason":"interrupted by the user"}`},
	} {
		var d chatData
		if err := json.Unmarshal([]byte(ev.data), &d); err != nil {
			t.Fatal(err)
		}
		out.WriteString(v.render(ev.typ, d))
		if turnEnds(ev.typ, d) {
			ends++
		}
	}
	want := `Let me look.
→ read_file {"path":"a.go"}
← ok 1.2 KB
→ edit_file (arguments are not JSON: unexpected end of JSON input)
← error outside_root: ../x is outside the project
✗ denied: timeout
(model error rate_limited: slow down; retrying in 2.0s)
model error interrupted: the node restarted
← ok 4 B
Done.
model error auth: 401: set OPENAI_API_KEY
(cancelled: interrupted by the user)
`
	if out.String() != want {
		t.Fatalf("rendered:\n%s\nwant:\n%s", out.String(), want)
	}
	if ends != 3 { // the answer without tool calls, the failure not retried, the cancel (an interrupted call is made again)
		t.Fatalf("%d events end the turn, want 3", ends)
	}
	q := approvalQuestion(chatData{Name: "run_command", Args: json.RawMessage(`{"cmd": "` + strings.Repeat("x", 100) + `"}`), Reason: "policy says ask"})
	if !strings.HasPrefix(q, `approve run_command {"cmd":"xxx`) || !strings.Contains(q, "…") || !strings.HasSuffix(q, "(policy says ask)? [y/N/a(lways)] ") {
		t.Fatalf("question %q", q)
	}
}
