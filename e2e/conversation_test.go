package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/jido-bus/jido-bus/internal/testkit"
)

// TestConversationThroughNATSCLI sends conversation events with the NATS
// CLI to a running node — a user message through `jido-bus conv send`, the
// assistant's side as CloudEvents on the conversation agent's subject —
// and reads the timeline back with `jido-bus conv show`.
func TestConversationThroughNATSCLI(t *testing.T) {
	node := StartNode(t, tools, t.TempDir())
	const conv = "demo/c1"

	// Driven from outside (no project demo): an operator starts it.
	tools.Run(t, "agent", "start", "conversation", "--id", conv, "--nats-url", node.URL)
	out := tools.Run(t, "conv", "send", conv, "What does main.go do?", "--nats-url", node.URL)
	if !strings.Contains(out, "sent ") {
		t.Fatalf("conv send: %q", out)
	}
	// The assistant's side: binary-mode CloudEvents with the NATS CLI.
	events := []struct{ typ, id, cause, data string }{
		{"conversation.llm.requested", "l1", "u1", `{"model":"m1","attempt":1}`},
		{"conversation.assistant.delta", "d1", "l1", `{"text":"It sta"}`},
		{"conversation.llm.completed", "l2", "l1", `{"model":"m1","usage":{"input_tokens":12,"output_tokens":5},"latency_ms":40}`},
		{"conversation.tool.requested", "t1", "l2", `{"call_id":"k1","name":"read_file","args":{"path":"main.go"}}`},
		{"conversation.tool.completed", "t2", "k1", `{"call_id":"k1","output":"package main"}`},
		{"conversation.assistant.message", "a1", "t2", `{"text":"It starts the server."}`},
	}
	for _, e := range events {
		r := reply(t, node.NATS(t, "req", "--raw", "jido.agent."+conv+"."+e.typ, e.data,
			"-H", "ce-specversion:1.0", "-H", "ce-id:"+e.id, "-H", "ce-source:assistant", "-H", "ce-type:"+e.typ,
			"-H", "ce-causationid:"+e.cause, "-H", "content-type:application/json"))
		if r["ok"] != true {
			t.Fatalf("%s: %v", e.typ, r)
		}
	}
	// A bad event is refused with the failing field.
	bad := reply(t, node.NATS(t, "req", "--raw", "jido.agent."+conv+".conversation.tool.completed", `{"output":"x"}`,
		"-H", "ce-specversion:1.0", "-H", "ce-id:bad1", "-H", "ce-source:assistant", "-H", "ce-causationid:k9"))
	if bad["ok"] != false || !strings.Contains(string(mustJSON(t, bad)), "call_id") {
		t.Fatalf("bad event: %v", bad)
	}

	var timeline struct {
		Items []struct {
			Kind string `json:"kind"`
			Text string `json:"text"`
			Tool *struct {
				Name   string `json:"name"`
				Status string `json:"status"`
			} `json:"tool"`
		} `json:"items"`
	}
	testkit.Eventually(t, "the timeline", func() bool {
		out := tools.Run(t, "conv", "show", conv, "--json", "--nats-url", node.URL)
		var show struct {
			State json.RawMessage `json:"state"`
		}
		if json.Unmarshal([]byte(out), &show) != nil || json.Unmarshal(show.State, &timeline) != nil {
			timeline.Items = nil
			_ = json.Unmarshal([]byte(out), &timeline)
		}
		return len(timeline.Items) >= 3
	})
	var kinds []string
	for _, it := range timeline.Items {
		kinds = append(kinds, it.Kind)
	}
	joined := strings.Join(kinds, ",")
	for _, want := range []string{"user", "tool", "assistant"} {
		if !strings.Contains(joined, want) {
			t.Fatalf("timeline kinds %v lack %q", kinds, want)
		}
	}
	text := tools.Run(t, "conv", "show", conv, "--nats-url", node.URL)
	for _, want := range []string{"What does main.go do?", "read_file", "It starts the server."} {
		if !strings.Contains(text, want) {
			t.Fatalf("conv show does not show %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "It sta\n") {
		t.Fatalf("a transient delta reached the timeline:\n%s", text)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
