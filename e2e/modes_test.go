package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestModesThroughTheBinary: a conversation started with --mode plan on
// the scripted model reads (read_file runs) and cannot write (write_file
// failed plan_mode, never started, no file); conv mode ask makes the next
// write wait for a person, who approves it; conv mode auto lets the next
// write run at once; a tool the policy asks about still asks in auto.
// conv show --view status shows the mode, the timeline each change, and
// log replay --verify re-decides the conversation with its modes.
func TestModesThroughTheBinary(t *testing.T) {
	rig := &assistantRig{t: t, dataDir: t.TempDir()}
	rig.restart(t)
	root := rig.newAssistantProject(t, "modes", "tools: {\"*\": allow, edit_file: ask}\n", []string{
		`{"text":"Looking.","tool_calls":[{"id":"r1","name":"read_file","args":{"path":"notes.txt"}},{"id":"w1","name":"write_file","args":{"path":"plan.txt","content":"x"}}]}`,
		`{"text":"Planned: write out.txt."}`,
		`{"text":"Writing.","tool_calls":[{"id":"w2","name":"write_file","args":{"path":"out.txt","content":"asked"}}]}`,
		`{"text":"Written after approval."}`,
		`{"text":"Writing again.","tool_calls":[{"id":"w3","name":"write_file","args":{"path":"auto.txt","content":"auto"}},{"id":"d1","name":"edit_file","args":{"path":"notes.txt","old_string":"hello","new_string":"bye"}}]}`,
		`{"text":"Done."}`,
	}, map[string]string{"notes.txt": "hello\n"})
	conv := "modes/c1"
	rig.run(t, "conv", "start", "modes", "--id", "c1", "--mode", "plan")
	rig.showSays(t, conv, "status", "mode: plan")
	rig.run(t, "conv", "send", conv, "make a plan")
	es := rig.awaitAnswer(t, conv, "Planned: write out.txt.")
	if len(es.call("conversation.tool.completed", "r1")) != 1 {
		t.Fatalf("read_file did not run in plan mode:\n%s", es)
	}
	if !es.has("conversation.tool.failed", `"w1"`, `"plan_mode"`) || len(es.call("conversation.tool.started", "w1")) != 0 {
		t.Fatalf("write_file in plan mode was not refused plan_mode before it started:\n%s", es)
	}
	if _, err := os.Stat(filepath.Join(root, "plan.txt")); !os.IsNotExist(err) {
		t.Fatalf("plan.txt in plan mode: %v, want none", err)
	}

	rig.run(t, "conv", "mode", conv, "ask", "--reason", "review each edit")
	rig.showSays(t, conv, "status", "mode: ask")
	rig.run(t, "conv", "send", conv, "now write it")
	es = rig.await(t, conv, "w2 waiting for a person", func(es convEvents) bool {
		return len(es.call("conversation.tool.approval.requested", "w2")) == 1
	})
	if !es.has("conversation.tool.approval.requested", `"w2"`, "ask mode") || len(es.call("conversation.tool.started", "w2")) != 0 {
		t.Fatalf("w2 in ask mode did not wait for a person before it started:\n%s", es)
	}
	rig.run(t, "conv", "approve", conv, "w2")
	rig.awaitAnswer(t, conv, "Written after approval.")
	if b, err := os.ReadFile(filepath.Join(root, "out.txt")); err != nil || string(b) != "asked" {
		t.Fatalf("out.txt after approval: %q %v", b, err)
	}

	rig.run(t, "conv", "mode", conv, "auto")
	rig.run(t, "conv", "send", conv, "go on")
	es = rig.await(t, conv, "w3 done and d1 asked about", func(es convEvents) bool {
		return len(es.call("conversation.tool.completed", "w3")) == 1 && len(es.call("conversation.tool.approval.requested", "d1")) == 1
	})
	if len(es.call("conversation.tool.approval.requested", "w3")) != 0 || !es.has("conversation.tool.approval.requested", `"d1"`, "policy") {
		t.Fatalf("in auto mode w3 was asked about, or the policy's ask of d1 did not hold:\n%s", es)
	}
	rig.run(t, "conv", "deny", conv, "d1")
	rig.awaitAnswer(t, conv, "Done.")
	if b, err := os.ReadFile(filepath.Join(root, "notes.txt")); err != nil || string(b) != "hello\n" {
		t.Fatalf("notes.txt after a denied edit: %q %v", b, err)
	}
	rig.showSays(t, conv, "status", "mode: auto")
	rig.showSays(t, conv, "timeline", "mode       ask (by ", "review each edit", "mode       auto")
	rig.replayVerifies(t, conv)

	// A mode that is none of the three is refused, naming them.
	if _, stderr, err := tryRun("conv", "mode", conv, "yolo", "--nats-url", rig.node.URL); err == nil || !strings.Contains(stderr, "plan, ask or auto") {
		t.Fatalf("conv mode yolo: %v\n%s", err, stderr)
	}
}
