package conversation

import (
	"encoding/json"
	"testing"

	"github.com/jido-bus/jido-bus/agents"
)

// runTools returns the RunTool directives among ds.
func runTools(ds []agents.Directive) []RunTool {
	var out []RunTool
	for _, d := range ds {
		if rt, ok := d.(RunTool); ok {
			out = append(out, rt)
		}
	}
	return out
}

// TestLoopDelegatedToolsOnly: a delegated conversation's model is offered
// only the tools its parent handed on (LLMCall.Tools), and a call of any
// other tool is failed not_delegated without running, while its own tools
// run.
func TestLoopDelegatedToolsOnly(t *testing.T) {
	r := newLoopRun(t)
	r.feed(Started, "s", "s", map[string]any{"assistant": true, "tools": []string{"read_file"}, "delegated": map[string]any{"conversation": "p1/c0", "call_id": "d1", "depth": 1}})
	ds := r.feed(UserMessage, "u1", "u1", map[string]any{"text": "look"})
	r.expect(ds, "llm_call(llm.u1.1.1 delay=0)")
	if c := ds[0].(LLMCall); c.Tools == nil || len(*c.Tools) != 1 || (*c.Tools)[0] != "read_file" {
		t.Fatalf("LLMCall.Tools = %v, want [read_file]", c.Tools)
	}
	r.expect(r.answer("llm.u1.1.1", "write_file", "read_file"),
		"record(conversation.tool.failed tool.write_file-1.failed) run_tool(read_file-2 read_file approved=false)")

	// No tools at all is a list too, not "every tool".
	r2 := newLoopRun(t)
	r2.feed(Started, "s", "s", map[string]any{"assistant": true, "tools": []string{}})
	r2.feed(UserMessage, "u1", "u1", map[string]any{"text": "think"})
	r2.expect(r2.answer("llm.u1.1.1", "read_file"), "record(conversation.tool.failed tool.read_file-1.failed)")

	// A conversation that names no tools may call every tool.
	r3 := newLoopRun(t)
	r3.feed(Started, "s", "s", map[string]any{"assistant": true})
	ds = r3.feed(UserMessage, "u1", "u1", map[string]any{"text": "go"})
	if c := ds[0].(LLMCall); c.Tools != nil {
		t.Fatalf("LLMCall.Tools = %v, want nil", *c.Tools)
	}
	r3.expect(r3.answer("llm.u1.1.1", "write_file"), "run_tool(write_file-1 write_file approved=false)")
}

// TestLoopDelegateBudget: a delegate call hands its child what is left of
// the conversation's budget, and what the child spent (the usage and
// cost of the call's outcome) counts toward it: once spent, the turn ends
// with conversation.budget.exceeded and no model is asked again.
func TestLoopDelegateBudget(t *testing.T) {
	r := newLoopRun(t)
	r.feed(Started, "s", "s", map[string]any{"assistant": true, "budget": map[string]any{"max_tokens": 100}})
	r.feed(UserMessage, "u1", "u1", map[string]any{"text": "hi"})
	ds := r.completed("llm.u1.1.1", 20, 10, 0, DelegateTool)
	r.expect(ds, "run_tool(delegate delegate approved=false)")
	if b := runTools(ds)[0].Budget; b == nil || b.MaxTokens != 70 {
		t.Fatalf("the child's budget: %+v, want 70 tokens (100 less the 30 used)", b)
	}
	// Another tool gets no budget.
	ds = r.feed(ToolCompleted, "tool.delegate.completed", DelegateTool, map[string]any{
		"call_id": DelegateTool, "output": json.RawMessage(`{"answer":"done"}`), "conversation_id": "c0-delegate",
		"usage": map[string]any{"input_tokens": 50, "output_tokens": 20},
	})
	r.expect(ds, "record(conversation.budget.exceeded budget.u1)")
	if got := budgetEvent(t, ds); got.Used != 100 {
		t.Fatalf("budget used: %v, want 100 (30 of its own, 70 of its child)", got.Used)
	}
	r.expect(r.feed(UserMessage, "u2", "u2", map[string]any{"text": "more"}), "record(conversation.budget.exceeded budget.u2)")

	// Without a budget the child's spending decides nothing.
	r2 := newLoopRun(t)
	r2.feed(UserMessage, "u1", "u1", map[string]any{"text": "hi"})
	ds = r2.completed("llm.u1.1.1", 20, 10, 0, DelegateTool, "read_file")
	if b := runTools(ds); b[0].Budget != nil || b[1].Budget != nil {
		t.Fatalf("budgets without one: %+v %+v", b[0].Budget, b[1].Budget)
	}
	r2.feed(ToolCompleted, "tool.read_file.completed", "read_file", map[string]any{"call_id": "read_file", "output": "x"})
	r2.expect(r2.feed(ToolCompleted, "tool.delegate.completed", DelegateTool, map[string]any{
		"call_id": DelegateTool, "output": "x", "usage": map[string]any{"input_tokens": 5e9, "output_tokens": 1},
	}), "llm_call(llm.u1.2.1 delay=0)")
}
