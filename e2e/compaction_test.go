package e2e

import (
	"strings"
	"testing"
)

// TestCompactionThroughTheBinary: on a node whose default window is tiny
// (--context-window 400), a turn whose tool results fill the context is
// compacted before its next LLM call (conversation.compacted, the call
// then sent the task and the summary — the scripted model's expect fails
// the call otherwise); conv compact compacts on demand between turns and
// is refused while a turn runs; the timeline and status show it; log
// replay --verify re-decides the conversation without a model.
func TestCompactionThroughTheBinary(t *testing.T) {
	rig := &assistantRig{t: t, dataDir: t.TempDir()}
	rig.node = StartNode(t, tools, rig.dataDir, "--context-window", "400")
	big := strings.Repeat("parser line of the old C code\n", 60) // ~1800 bytes
	rig.newAssistantProject(t, "squeeze", "", []string{
		`{"text":"Reading a.","tool_calls":[{"id":"r1","name":"read_file","args":{"path":"a.txt"}}],"usage":{"input_tokens":50,"output_tokens":10}}`,
		`{"text":"Reading b.","tool_calls":[{"id":"r2","name":"read_file","args":{"path":"b.txt"}}],"usage":{"input_tokens":150,"output_tokens":10}}`,
		`{"text":"SUMMARY-ONE","summary":true}`,
		`{"text":"Ported.","expect":"TASK-ALPHA"}`,
		`{"text":"Second answer.","expect":"SUMMARY-ONE"}`,
		`{"text":"SUMMARY-TWO","summary":true}`,
		`{"text":"Third answer.","expect":"TASK-ALPHA"}`,
		`{"text":"slow answer that never ends in time","chunk":1,"delay_ms":60000}`,
	}, map[string]string{"a.txt": "short\n", "b.txt": big})
	conv := rig.startConv(t, "squeeze", "c1")
	rig.run(t, "conv", "send", conv, "TASK-ALPHA: port the parser to Go")
	es := rig.awaitAnswer(t, conv, "Ported.")
	auto := es.of("conversation.compacted")
	if len(auto) != 1 || !es.has("conversation.compacted", `"summary":"SUMMARY-ONE"`, `"reason":"window"`) {
		t.Fatalf("want one compaction for the window before the third call:\n%s", es)
	}
	if !es.has("conversation.llm.requested", `"window":400`) {
		t.Fatalf("llm.requested does not record the window:\n%s", es)
	}
	if es.has("conversation.llm.failed") {
		t.Fatalf("a call failed (the scripted model's expect: the task was not sent):\n%s", es)
	}
	// The summary is in the context of the next turn too.
	rig.run(t, "conv", "send", conv, "and the tests?")
	rig.awaitAnswer(t, conv, "Second answer.")

	// On demand, between turns: conv compact waits for the summary.
	out := rig.run(t, "conv", "compact", conv, "--reason", "before the review")
	if !strings.Contains(out, "compacted "+conv) || !strings.Contains(out, "SUMMARY-TWO") {
		t.Fatalf("conv compact said:\n%s", out)
	}
	rig.showSays(t, conv, "llm_context", "TASK-ALPHA", "compacted: 6", "it replaces 4 messages, 3 of")
	rig.showSays(t, conv, "timeline", "compact    asked (by ", "before the review", "compacted  ", "→ summary (")
	rig.showSays(t, conv, "status", "compactions: 2")
	rig.run(t, "conv", "send", conv, "anything left?")
	es = rig.awaitAnswer(t, conv, "Third answer.")
	if es.has("conversation.llm.failed") {
		t.Fatalf("a call failed after conv compact (the task was not sent):\n%s", es)
	}
	rig.replayVerifies(t, conv)

	// While a turn runs, conv compact is refused and appends nothing.
	rig.run(t, "conv", "send", conv, "one more")
	rig.await(t, conv, "the slow turn's call", func(es convEvents) bool {
		return len(es.of("conversation.llm.requested")) == 6
	})
	_, stderr, err := tryRun("conv", "compact", conv, "--nats-url", rig.node.URL)
	if err == nil || !strings.Contains(stderr, "conflict") || !strings.Contains(stderr, "in a turn") {
		t.Fatalf("conv compact during a turn: %v\n%s", err, stderr)
	}
	rig.run(t, "conv", "cancel", conv)
	es = rig.await(t, conv, "the slow turn cancelled", func(es convEvents) bool {
		return es.has("conversation.llm.failed", `"cancelled"`)
	})
	if n := len(es.of("conversation.compact")); n != 1 {
		t.Fatalf("%d conversation.compact, want 1: the refused one appended nothing\n%s", n, es)
	}
	rig.replayVerifies(t, conv)
}
