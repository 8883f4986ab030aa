package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// chatEventOf builds an event of typ with data for the view's tests.
func chatEventOf(t *testing.T, typ, request, data string) chatEvent {
	t.Helper()
	ev := chatEvent{typ: typ, request: request}
	if err := json.Unmarshal([]byte(data), &ev.data); err != nil {
		t.Fatal(err)
	}
	return ev
}

// TestChatView: each event as conv chat prints it, in order, the view
// ending streamed text's line before anything else is printed.
func TestChatView(t *testing.T) {
	var v chatView
	var out strings.Builder
	ends := 0
	for _, ev := range []struct{ typ, req, data string }{
		{"conversation.user.message", "", `{"text":"hi"}`},
		{"conversation.assistant.delta", "r1", `{"text":"Let me "}`},
		{"conversation.assistant.delta", "r1", `{"text":"look."}`},
		{"conversation.tool.requested", "r1", `{"call_id":"k1","name":"read_file","args":{"path": "a.go"}}`},
		{"conversation.assistant.message", "r1", `{"text":"Let me look.","tool_calls":2}`},
		{"conversation.tool.completed", "", `{"call_id":"k1","output_ref":{"id":"x","size":1229}}`},
		{"conversation.tool.requested", "r1", `{"call_id":"k2","name":"edit_file","args_error":"unexpected end of JSON input"}`},
		{"conversation.tool.failed", "", `{"call_id":"k2","error":{"type":"outside_root","message":"../x is outside the project"}}`},
		{"conversation.tool.approval.requested", "", `{"call_id":"k3","name":"write_file","args":{}}`},
		{"conversation.tool.approval", "", `{"call_id":"k3","decision":"deny","reason":"timeout"}`},
		{"conversation.llm.failed", "r2", `{"error":{"type":"rate_limited","message":"slow down"},"retry_in_ms":2000}`},
		{"conversation.llm.failed", "r3", `{"error":{"type":"interrupted","message":"LLM call r3 did not finish: the node stopped"}}`},
		{"conversation.tool.completed", "", `{"call_id":"k4","output":"ok"}`},
		{"conversation.assistant.message", "r4", `{"text":"Done.","tool_calls":0}`},
		{"conversation.llm.failed", "r5", `{"error":{"type":"auth","message":"401: set OPENAI_API_KEY"}}`},
		{"conversation.cancel", "", `{"reason":"interrupted by the user"}`},
		{"conversation.budget.exceeded", "", `{"what":"tokens","limit":10,"used":12,"reason":"the conversation's budget is spent (12 of 10 tokens used)"}`},
	} {
		e := chatEventOf(t, ev.typ, ev.req, ev.data)
		out.WriteString(v.render(e))
		if turnEnds(e) {
			ends++
		}
	}
	want := `> hi
Let me look.
→ read_file {"path":"a.go"}
← ok 1.2 KB
→ edit_file (arguments are not JSON: unexpected end of JSON input)
← error outside_root: ../x is outside the project
✗ denied: timeout
(model error rate_limited: slow down; retrying in 2.0s)
(the answer was interrupted: LLM call r3 did not finish: the node stopped; asking the model again)
← ok 4 B
Done.
model error auth: 401: set OPENAI_API_KEY
(cancelled: interrupted by the user)
(the conversation's budget is spent (12 of 10 tokens used))
`
	if out.String() != want {
		t.Fatalf("rendered:\n%s\nwant:\n%s", out.String(), want)
	}
	if ends != 4 { // the answer without tool calls, the failure not retried, the cancel, the budget spent (an interrupted call is made again)
		t.Fatalf("%d events end the turn, want 4", ends)
	}
	q := approvalQuestion(chatData{Name: "run_command", Args: json.RawMessage(`{"cmd": "` + strings.Repeat("x", 100) + `"}`), Reason: "policy says ask", TimeoutMS: 300000})
	if !strings.HasPrefix(q, `approve run_command {"cmd":"xxx`) || !strings.Contains(q, "…") || !strings.HasSuffix(q, "(policy says ask; denied unless answered within 5m0s)? [y/N/a(lways)] ") {
		t.Fatalf("question %q", q)
	}
}

// TestChatViewPrintsAnAnswerOnce: whatever comes between an answer's
// deltas and its committed message — the call's llm.requested published
// after its first deltas (it is committed, they are not), another call's
// stream, a tool call — the answer's text is printed once; a message
// holding more than was streamed (cut, or deltas missed) prints the rest.
// conv chat printed an answer twice in 4 of 10 turns: llm.requested,
// coming after the deltas, made it forget what they had printed.
func TestChatViewPrintsAnAnswerOnce(t *testing.T) {
	for _, c := range []struct {
		name   string
		events [][3]string
		want   string
	}{
		{"requested after the deltas", [][3]string{
			{"conversation.assistant.delta", "r1", `{"text":"Hello "}`},
			{"conversation.llm.requested", "u1", `{}`},
			{"conversation.assistant.delta", "r1", `{"text":"there."}`},
			{"conversation.assistant.message", "r1", `{"text":"Hello there.","tool_calls":0}`},
		}, "Hello there.\n"},
		{"every delta before requested", [][3]string{
			{"conversation.assistant.delta", "r1", `{"text":"Short."}`},
			{"conversation.llm.requested", "u1", `{}`},
			{"conversation.assistant.message", "r1", `{"text":"Short.","tool_calls":0}`},
		}, "Short.\n"},
		{"a retried call after an interrupted one", [][3]string{
			{"conversation.assistant.delta", "r1", `{"text":"Half an ans"}`},
			{"conversation.llm.failed", "r1", `{"error":{"type":"interrupted","message":"the node stopped"}}`},
			{"conversation.assistant.delta", "r2", `{"text":"A whole "}`},
			{"conversation.assistant.delta", "r2", `{"text":"answer."}`},
			{"conversation.assistant.message", "r2", `{"text":"A whole answer.","tool_calls":0}`},
		}, "Half an ans\n(the answer was interrupted: the node stopped; asking the model again)\nA whole answer.\n"},
		{"deltas missed at the start", [][3]string{
			{"conversation.assistant.delta", "r1", `{"text":"world."}`},
			{"conversation.assistant.message", "r1", `{"text":"Hello world.","tool_calls":0}`},
		}, "world.\nHello world.\n"},
		{"an answer cut to fit an event", [][3]string{
			{"conversation.assistant.delta", "r1", `{"text":"abcdef"}`},
			{"conversation.assistant.message", "r1", `{"text":"abc\n[cut]","tool_calls":0}`},
		}, "abcdef\n\n[cut]\n"},
		{"an event without its call's id", [][3]string{
			{"conversation.assistant.delta", "", `{"text":"No "}`},
			{"conversation.assistant.delta", "", `{"text":"id."}`},
			{"conversation.assistant.message", "", `{"text":"No id.","tool_calls":0}`},
		}, "No id.\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var v chatView
			var out strings.Builder
			for _, e := range c.events {
				out.WriteString(v.render(chatEventOf(t, e[0], e[1], e[2])))
			}
			if out.String() != c.want {
				t.Errorf("printed %q, want %q", out.String(), c.want)
			}
		})
	}
}

// TestChatViewApprovals: a decision is shown only for a call whose
// approval was asked and not answered yet: the approval timeout's deny of
// a call approved already (which the conversation ignores) is not shown
// as "denied after … without an answer".
func TestChatViewApprovals(t *testing.T) {
	var v chatView
	var out strings.Builder
	for _, e := range [][2]string{
		{"conversation.tool.approval.requested", `{"call_id":"k1","name":"write_file","args":{"path":"a"},"timeout_ms":300000}`},
		{"conversation.tool.approval", `{"call_id":"k1","decision":"approve","by":"ana"}`},
		{"conversation.tool.approval", `{"call_id":"k1","decision":"deny","reason":"denied after 5m0s without an answer"}`},
		{"conversation.tool.completed", `{"call_id":"k1","output":"ok"}`},
	} {
		out.WriteString(v.render(chatEventOf(t, e[0], "", e[1])))
	}
	if want := "✓ approved: by ana\n← ok 4 B\n"; out.String() != want {
		t.Errorf("printed %q, want %q", out.String(), want)
	}
}
