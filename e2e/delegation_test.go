package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/jido-bus/jido-bus/internal/testkit"
)

// delegateScript plays a parent that hands "count the lines of
// notes.txt" to a child with read_file only, and the child, which tries
// write_file too (refused: not handed to it), reads, and answers. childDelay
// slows the child's first answer (a kill lands in it).
func delegateScript(childDelay int) []string {
	return []string{
		`{"text":"Delegating.","tool_calls":[{"id":"d1","name":"delegate","args":{"task":"count the lines of notes.txt","tools":["read_file"],"max_steps":4}}],"usage":{"input_tokens":10,"output_tokens":10}}`,
		`{"text":"The child counted 2 lines."}`,
		`{"for":"count the lines","text":"Reading.","delay_ms":` + itoa(childDelay) + `,"tool_calls":[{"id":"r1","name":"read_file","args":{"path":"notes.txt"}},{"id":"w1","name":"write_file","args":{"path":"x.txt","content":"no"}}],"usage":{"input_tokens":5,"output_tokens":5}}`,
		`{"for":"count the lines","text":"notes.txt has 2 lines.","usage":{"input_tokens":5,"output_tokens":5}}`,
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestDelegationThroughTheBinary: the delegate tool starts a child
// conversation with a subset of the parent's tools; a call outside them
// is refused in the child without running; the child's answer is the
// parent's tool output; each timeline names the other; conv ls shows the
// parent; log replay --verify re-decides both.
func TestDelegationThroughTheBinary(t *testing.T) {
	rig := &assistantRig{t: t, dataDir: t.TempDir()}
	rig.restart(t)
	root := rig.newAssistantProject(t, "team", "", delegateScript(0), map[string]string{"notes.txt": "one\ntwo\n"})
	rig.run(t, "conv", "start", "team", "--id", "lead", "--max-tokens", "1000")
	rig.run(t, "conv", "send", "team/lead", "how long are the notes?")
	es := rig.awaitAnswer(t, "team/lead", "The child counted 2 lines.")
	if !es.has("conversation.tool.completed", `"conversation_id":"lead-d1"`, `"answer":"notes.txt has 2 lines."`, `"input_tokens":10`) {
		t.Fatalf("the delegate call's outcome does not name the child, carry its answer and what it spent:\n%s", es)
	}
	child := rig.events(t, "team/lead-d1")
	if !child.has("conversation.started", `"delegated":{"conversation":"team/lead","call_id":"d1","depth":1}`, `"tools":["read_file"]`, `"max_tokens":980`) {
		t.Fatalf("the child's start does not name its parent, its tools and what was left of the budget:\n%s", child)
	}
	if !child.has("conversation.tool.failed", `"w1"`, `"not_delegated"`) || len(child.call("conversation.tool.started", "w1")) != 0 {
		t.Fatalf("write_file ran in a child handed read_file only:\n%s", child)
	}
	if _, err := os.Stat(filepath.Join(root, "x.txt")); err == nil {
		t.Fatal("x.txt was written by a child not handed write_file")
	}
	rig.showSays(t, "team/lead", "timeline", "delegated → lead-d1")
	rig.showSays(t, "team/lead-d1", "status", "delegated by: team/lead (call d1, depth 1)")
	if out := rig.run(t, "conv", "ls"); !strings.Contains(out, "PARENT") || !strings.Contains(out, "team/lead") {
		t.Fatalf("conv ls shows no parent:\n%s", out)
	}
	rig.replayVerifies(t, "team/lead")
	rig.replayVerifies(t, "team/lead-d1")
}

// TestDelegationRefusals: past delegation.max_depth, past max_fanout, a
// tool the parent does not have, a looser mode: each delegate call fails
// delegation_refused naming what to do, and the conversation goes on.
func TestDelegationRefusals(t *testing.T) {
	rig := &assistantRig{t: t, dataDir: t.TempDir()}
	rig.restart(t)
	script := []string{
		// lead: two at once under max_fanout 1, then a tool it lacks.
		`{"text":"Two at once.","tool_calls":[{"id":"a","name":"delegate","args":{"task":"deeper please"}},{"id":"b","name":"delegate","args":{"task":"deeper please"}}]}`,
		`{"text":"More.","tool_calls":[{"id":"c","name":"delegate","args":{"task":"x","tools":["launch_rockets"]}}]}`,
		`{"text":"Done."}`,
		// its child delegates again: past max_depth 1.
		`{"for":"deeper please","text":"Again.","tool_calls":[{"id":"g","name":"delegate","args":{"task":"deepest"}}]}`,
		`{"for":"deeper please","text":"I could not go deeper."}`,
		// a conversation in ask mode hands on auto.
		`{"for":"be careful","text":"Loosen.","tool_calls":[{"id":"e","name":"delegate","args":{"task":"x","mode":"auto"}}]}`,
		`{"for":"be careful","text":"Careful done."}`,
	}
	rig.newAssistantProject(t, "team", "", script, map[string]string{
		".jido/config.yaml": "llm: {provider: scripted, model: demo, script: .jido/script.jsonl}\ndelegation: {max_depth: 1, max_fanout: 1}\n",
	})
	rig.run(t, "conv", "start", "team", "--id", "lead")
	rig.run(t, "conv", "send", "team/lead", "go")
	es := rig.awaitAnswer(t, "team/lead", "Done.")
	if n := len(es.of("conversation.tool.completed")); n != 1 || !es.has("conversation.tool.failed", `"delegation_refused"`, "delegation.max_fanout") {
		t.Fatalf("two delegate calls at once under max_fanout 1: want one answered and one refused naming delegation.max_fanout:\n%s", es)
	}
	if !es.has("conversation.tool.failed", `"c"`, "launch_rockets is not among this conversation's tools") {
		t.Fatalf("a tool the parent lacks was handed on:\n%s", es)
	}
	child := "team/lead-a"
	if len(es.call("conversation.tool.completed", "b")) == 1 {
		child = "team/lead-b"
	}
	ces := rig.events(t, child)
	if !ces.has("conversation.tool.failed", `"g"`, `"delegation_refused"`, "delegation.max_depth 1") {
		t.Fatalf("a grandchild past max_depth 1 was not refused:\n%s", ces)
	}

	rig.run(t, "conv", "start", "team", "--id", "careful", "--mode", "ask")
	rig.run(t, "conv", "send", "team/careful", "be careful")
	rig.await(t, "team/careful", "delegate awaiting approval in ask mode", func(es convEvents) bool {
		return len(es.call("conversation.tool.approval.requested", "e")) == 1
	})
	rig.run(t, "conv", "approve", "team/careful", "e")
	es = rig.awaitAnswer(t, "team/careful", "Careful done.")
	if !es.has("conversation.tool.failed", `"e"`, "mode auto is looser than this conversation's ask") {
		t.Fatalf("a looser mode was handed on:\n%s", es)
	}
	for _, c := range []string{"team/lead", child, "team/careful"} {
		rig.replayVerifies(t, c)
	}
}

// TestDelegationSurvivesKill: kill -9 while the child works; after the
// restart the child's interrupted LLM call is made again, as in every
// conversation, and the parent's delegate call, found again, waits for
// its answer: one outcome, the parent's turn ends, both replay.
func TestDelegationSurvivesKill(t *testing.T) {
	rig := &assistantRig{t: t, dataDir: t.TempDir()}
	rig.restart(t)
	rig.newAssistantProject(t, "team", "", delegateScript(1500), map[string]string{"notes.txt": "one\ntwo\n"})
	rig.run(t, "conv", "start", "team", "--id", "lead")
	rig.run(t, "conv", "send", "team/lead", "how long are the notes?")
	// The child's stream exists once it started: wait for it, then for
	// its model call.
	testkit.EventuallyNil(t, "the child conversation started", func() error {
		_, _, err := tryRun("log", "show", "conversation/team/lead-d1", "--limit", "1", "--nats-url", rig.node.URL)
		return err
	})
	rig.await(t, "team/lead-d1", "the child asking its model", func(es convEvents) bool {
		return len(es.of("conversation.llm.requested")) == 1
	})
	rig.node.Kill(t)
	rig.restart(t)
	es := rig.awaitAnswer(t, "team/lead", "The child counted 2 lines.")
	if n := len(es.call("conversation.tool.completed", "d1")); n != 1 {
		t.Fatalf("%d outcomes of the delegate call, want 1:\n%s", n, es)
	}
	child := rig.events(t, "team/lead-d1")
	if !child.has("conversation.llm.failed", `"interrupted"`) || len(child.of("conversation.user.message")) != 1 {
		t.Fatalf("the child was not interrupted and resumed with its one task:\n%s", child)
	}
	rig.replayVerifies(t, "team/lead")
	rig.replayVerifies(t, "team/lead-d1")
}
