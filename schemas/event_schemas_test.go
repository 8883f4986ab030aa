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
