package schemas

import (
	"errors"
	"strings"
	"testing"
)

// TestConversationEventSchemas checks the "event" kind: every conversation
// event type is registered, requires causationid, and names the failing
// field of a bad event by JSON pointer.
func TestConversationEventSchemas(t *testing.T) {
	r, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	types := []string{
		"conversation.started", "conversation.user.message", "conversation.assistant.delta",
		"conversation.assistant.message", "conversation.llm.requested", "conversation.llm.completed",
		"conversation.llm.failed", "conversation.tool.requested", "conversation.tool.started",
		"conversation.tool.completed", "conversation.tool.failed", "conversation.tool.cancelled",
		"conversation.tool.timeout", "conversation.cancel", "conversation.resume", "conversation.stopped",
		"conversation.tool.approval.requested", "conversation.tool.approval", "conversation.budget.exceeded",
		"conversation.mode",
	}
	kinds := make(map[string]string)
	for _, e := range r.Entries() {
		kinds[e.Name] = e.Kind
	}
	for _, typ := range types {
		if kinds[typ] != "event" {
			t.Errorf("%s: kind %q, want event", typ, kinds[typ])
		}
		// Without causationid every conversation event is refused.
		err := r.Validate(typ, decode(t, `{"specversion":"1.0","id":"1","source":"s","type":"`+typ+`","data":{}}`))
		ve, ok := errors.AsType[*ValidationError](err)
		if !ok || !strings.Contains(ve.Error(), "causationid") {
			t.Errorf("%s without causationid: %v", typ, err)
		}
	}
	const head = `{"specversion":"1.0","id":"e1","source":"/conv","causationid":"c0",`
	tests := []struct {
		name, event string
		pointer     string // "" means valid
	}{
		{"conversation.started", head + `"type":"conversation.started","data":{"project_id":"p","conversation_id":"c"}}`, ""},
		{"conversation.started", head + `"type":"conversation.started","data":{"project_id":"p"}}`, "/data/conversation_id"},
		{"conversation.started", head + `"type":"conversation.started","parentid":"x9","data":{"project_id":"p","conversation_id":"c2","parent":{"conversation":"p/c","seq":4,"event_id":"x9"}}}`, ""},
		{"conversation.started", head + `"type":"conversation.started","data":{"project_id":"p","conversation_id":"c2","parent":{"conversation":"p/c","seq":0,"event_id":"x9"}}}`, "/data/parent/seq"},
		{"conversation.user.message", head + `"type":"conversation.user.message","data":{"text":"hi"}}`, ""},
		{"conversation.user.message", head + `"type":"conversation.user.message","data":{"text":3}}`, "/data/text"},
		{"conversation.user.message", head + `"type":"conversation.assistant.message","data":{"text":"hi"}}`, "/type"},
		{"conversation.llm.completed", head + `"type":"conversation.llm.completed","data":{"model":"m","usage":{"input_tokens":10,"output_tokens":2},"latency_ms":30}}`, ""},
		{"conversation.llm.completed", head + `"type":"conversation.llm.completed","data":{"usage":{"input_tokens":-1,"output_tokens":2}}}`, "/data/usage/input_tokens"},
		{"conversation.llm.completed", head + `"type":"conversation.llm.completed","data":{"usage":{"input_tokens":1,"output_tokens":2},"cost_usd":0.0003}}`, ""},
		{"conversation.llm.completed", head + `"type":"conversation.llm.completed","data":{"usage":{"input_tokens":1,"output_tokens":2},"cost_usd":-1}}`, "/data/cost_usd"},
		{"conversation.started", head + `"type":"conversation.started","data":{"project_id":"p","conversation_id":"c","budget":{"max_tokens":1000,"max_cost_usd":0.5}}}`, ""},
		{"conversation.started", head + `"type":"conversation.started","data":{"project_id":"p","conversation_id":"c","budget":{"max_tokens":-1}}}`, "/data/budget/max_tokens"},
		{"conversation.started", head + `"type":"conversation.started","data":{"project_id":"p","conversation_id":"c","budget":{"tokens":5}}}`, "/data/budget/tokens"},
		{"conversation.budget.exceeded", head + `"type":"conversation.budget.exceeded","data":{"what":"tokens","limit":100,"used":120,"reason":"spent"}}`, ""},
		{"conversation.budget.exceeded", head + `"type":"conversation.budget.exceeded","data":{"what":"time","limit":100,"used":120}}`, "/data/what"},
		{"conversation.budget.exceeded", head + `"type":"conversation.budget.exceeded","data":{"what":"cost","limit":0.5}}`, "/data/used"},
		{"conversation.mode", head + `"type":"conversation.mode","data":{"mode":"plan","by":"alice"}}`, ""},
		{"conversation.mode", head + `"type":"conversation.mode","data":{"mode":"yolo"}}`, "/data/mode"},
		{"conversation.started", head + `"type":"conversation.started","data":{"project_id":"p","conversation_id":"c","mode":"ask"}}`, ""},
		{"conversation.started", head + `"type":"conversation.started","data":{"project_id":"p","conversation_id":"c","mode":"read-only"}}`, "/data/mode"},
		{"conversation.llm.failed", head + `"type":"conversation.llm.failed","data":{"error":{"type":"rate_limited","message":"slow down"}}}`, ""},
		{"conversation.llm.failed", head + `"type":"conversation.llm.failed","data":{"error":{"type":"Rate Limited","message":"x"}}}`, "/data/error/type"},
		{"conversation.tool.requested", head + `"type":"conversation.tool.requested","data":{"call_id":"t1","name":"grep","args":{"q":"x"}}}`, ""},
		{"conversation.tool.requested", head + `"type":"conversation.tool.requested","data":{"name":"grep"}}`, "/data/call_id"},
		{"conversation.tool.completed", head + `"type":"conversation.tool.completed","data":{"call_id":"t1","output":"ok"}}`, ""},
		{"conversation.tool.completed", head + `"type":"conversation.tool.completed","data":{"call_id":"t1","output_ref":{"id":"sha256:` + strings.Repeat("ab", 32) + `","size":70000}}}`, ""},
		{"conversation.tool.completed", head + `"type":"conversation.tool.completed","data":{"call_id":"t1","output_ref":{"id":"md5:1","size":1}}}`, "/data/output_ref/id"},
		{"conversation.tool.completed", head + `"type":"conversation.tool.completed","data":{"call_id":"t1"}}`, "/data/output"}, // neither output nor output_ref
		{"conversation.tool.failed", head + `"type":"conversation.tool.failed","data":{"call_id":"t1","error":{"type":"interrupted","message":"restarted"}}}`, ""},
		{"conversation.tool.timeout", head + `"type":"conversation.tool.timeout","data":{"call_id":"t1","timeout_ms":"1s"}}`, "/data/timeout_ms"},
		{"conversation.stopped", head + `"type":"conversation.stopped","data":{"reason":"completed"}}`, ""},

		// Issue 14: the members the loop, the providers and approvals add.
		{"conversation.started", head + `"type":"conversation.started","data":{"project_id":"p","conversation_id":"c","llm":{"provider":"openai","model":"gpt-x","base_url":"http://127.0.0.1:11434/v1","api_key_env":"OPENAI_API_KEY","temperature":0.2,"max_tokens":4096,"timeout_ms":60000},"limits":{"max_steps":25,"max_tool_calls":50,"parallel_tools":4}}}`, ""},
		{"conversation.started", head + `"type":"conversation.started","data":{"project_id":"p","conversation_id":"c","llm":{"api_key":"sk-secret"}}}`, "/data/llm/api_key"},
		{"conversation.started", head + `"type":"conversation.started","data":{"project_id":"p","conversation_id":"c","llm":{"api_key_env":"sk-live key"}}}`, "/data/llm/api_key_env"},
		{"conversation.started", head + `"type":"conversation.started","data":{"project_id":"p","conversation_id":"c","llm":{"temperature":"hot"}}}`, "/data/llm/temperature"},
		{"conversation.started", head + `"type":"conversation.started","data":{"project_id":"p","conversation_id":"c","limits":{"max_steps":0}}}`, "/data/limits/max_steps"},
		{"conversation.started", head + `"type":"conversation.started","data":{"project_id":"p","conversation_id":"c","limits":{"parallel_tools":1.5}}}`, "/data/limits/parallel_tools"},
		{"conversation.llm.requested", head + `"type":"conversation.llm.requested","data":{"model":"m","attempt":2,"step":3,"provider":"anthropic"}}`, ""},
		{"conversation.llm.requested", head + `"type":"conversation.llm.requested","data":{"model":"m","step":0}}`, "/data/step"},
		{"conversation.llm.completed", head + `"type":"conversation.llm.completed","data":{"usage":{"input_tokens":1,"output_tokens":2},"tool_calls":2}}`, ""},
		{"conversation.llm.completed", head + `"type":"conversation.llm.completed","data":{"usage":{"input_tokens":1,"output_tokens":2},"tool_calls":-1}}`, "/data/tool_calls"},
		{"conversation.llm.failed", head + `"type":"conversation.llm.failed","data":{"error":{"type":"rate_limited","message":"429"},"retryable":true,"attempt":1,"retry_in_ms":1500,"status":429,"latency_ms":20}}`, ""},
		{"conversation.llm.failed", head + `"type":"conversation.llm.failed","data":{"error":{"type":"server","message":"x"},"retry_in_ms":-5}}`, "/data/retry_in_ms"},
		{"conversation.llm.failed", head + `"type":"conversation.llm.failed","data":{"error":{"type":"server","message":"x"},"attempt":0}}`, "/data/attempt"},
		{"conversation.llm.failed", head + `"type":"conversation.llm.failed","data":{"error":{"type":"server","message":"x"},"status":42}}`, "/data/status"},
		{"conversation.tool.requested", head + `"type":"conversation.tool.requested","data":{"call_id":"t1","name":"grep","args_error":"unexpected end of JSON input","args_text":"{\"q\":"}}`, ""},
		{"conversation.tool.requested", head + `"type":"conversation.tool.requested","data":{"call_id":"t1","name":"grep","args":{},"args_error":"bad","args_text":"{"}}`, "/data"},
		{"conversation.tool.requested", head + `"type":"conversation.tool.requested","data":{"call_id":"t1","name":"grep","args":{},"args_text":"{}"}}`, "/data"},
		{"conversation.assistant.message", head + `"type":"conversation.assistant.message","data":{"text":"","tool_calls":2}}`, ""},
		{"conversation.assistant.message", head + `"type":"conversation.assistant.message","data":{"text":"","tool_calls":"2"}}`, "/data/tool_calls"},
		// Past int's range the read models could not decode the event.
		{"conversation.assistant.message", head + `"type":"conversation.assistant.message","data":{"text":"","tool_calls":1e30}}`, "/data/tool_calls"},
		{"conversation.tool.approval.requested", head + `"type":"conversation.tool.approval.requested","data":{"call_id":"t1","name":"x","timeout_ms":1e19}}`, "/data/timeout_ms"},
		{"conversation.tool.approval.requested", head + `"type":"conversation.tool.approval.requested","data":{"call_id":"t1","name":"run_command","args":{"cmd":"make"},"reason":"run_command asks before it runs","timeout_ms":300000}}`, ""},
		{"conversation.tool.approval.requested", head + `"type":"conversation.tool.approval.requested","data":{"name":"run_command"}}`, "/data/call_id"},
		{"conversation.tool.approval.requested", head + `"type":"conversation.tool.approval.requested","data":{"call_id":"t1"}}`, "/data/name"},
		{"conversation.tool.approval.requested", head + `"type":"conversation.tool.approval.requested","data":{"call_id":"t1","name":"x","timeout_ms":0}}`, "/data/timeout_ms"},
		{"conversation.tool.approval", head + `"type":"conversation.tool.approval","data":{"call_id":"t1","decision":"approve","remember":"conversation","by":"ana"}}`, ""},
		{"conversation.tool.approval", head + `"type":"conversation.tool.approval","data":{"call_id":"t1","decision":"deny","reason":"timeout","by":"node"}}`, ""},
		{"conversation.tool.approval", head + `"type":"conversation.tool.approval","data":{"decision":"approve"}}`, "/data/call_id"},
		{"conversation.tool.approval", head + `"type":"conversation.tool.approval","data":{"call_id":"t1"}}`, "/data/decision"},
		{"conversation.tool.approval", head + `"type":"conversation.tool.approval","data":{"call_id":"t1","decision":"maybe"}}`, "/data/decision"},
		{"conversation.tool.approval", head + `"type":"conversation.tool.approval","data":{"call_id":"t1","decision":"approve","remember":"forever"}}`, "/data/remember"},
	}
	for _, tt := range tests {
		err := r.Validate(tt.name, decode(t, tt.event))
		if tt.pointer == "" {
			if err != nil {
				t.Errorf("%s: valid event rejected: %v", tt.name, err)
			}
			continue
		}
		ve, ok := errors.AsType[*ValidationError](err)
		if !ok || ve.Pointer() != tt.pointer {
			t.Errorf("%s: error %v, want one at %s", tt.name, err, tt.pointer)
		}
	}
}
