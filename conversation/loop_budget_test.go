package conversation

import (
	"encoding/json"
	"testing"

	"github.com/jido-bus/jido-bus/agents"
)

// completed feeds the llm.completed of req with its usage and cost, after
// the answer's message and tool calls (answer's).
func (r *loopRun) completed(req string, in, out int64, cost float64, calls ...string) []agents.Directive {
	r.t.Helper()
	r.feed(AssistantMessage, req+".message", req, map[string]any{"text": "ok", "tool_calls": len(calls)})
	for i, name := range calls {
		r.feed(ToolRequested, req+".call."+string(rune('1'+i)), req, map[string]any{"call_id": name, "name": name, "args": json.RawMessage(`{}`)})
	}
	data := map[string]any{"tool_calls": len(calls), "usage": map[string]any{"input_tokens": in, "output_tokens": out}}
	if cost > 0 {
		data["cost_usd"] = cost
	}
	return r.feed(LLMCompleted, req+".completed", req, data)
}

// budgetEvent returns the data of the conversation.budget.exceeded among ds.
func budgetEvent(t *testing.T, ds []agents.Directive) Data {
	t.Helper()
	for _, d := range ds {
		if rec, ok := d.(Record); ok && rec.Event.Type() == BudgetExceeded {
			data, err := DecodeData(rec.Event.Data())
			if err != nil {
				t.Fatal(err)
			}
			return data
		}
	}
	t.Fatalf("no %s among %s", BudgetExceeded, kinds(ds))
	return Data{}
}

// TestLoopBudgetTokens: the call that brings input plus output tokens to
// max_tokens ends the turn with conversation.budget.exceeded; its tool
// calls are failed, not run, and the model is not asked again; every
// later user message gets the same answer instead of an LLM call.
func TestLoopBudgetTokens(t *testing.T) {
	r := newLoopRun(t)
	r.feed(Started, "s", "s", map[string]any{"assistant": true, "budget": map[string]any{"max_tokens": 100}})
	r.expect(r.feed(UserMessage, "u1", "u1", map[string]any{"text": "hi"}), "llm_call(llm.u1.1.1 delay=0)")
	r.expect(r.completed("llm.u1.1.1", 40, 20, 0, "a"), "run_tool(a a approved=false)")
	r.expect(r.toolDone("a"), "llm_call(llm.u1.2.1 delay=0)")
	// A message during the turn waits for it, and is then refused too.
	r.expect(r.feed(UserMessage, "u2", "u2", map[string]any{"text": "and then?"}), "")
	ds := r.completed("llm.u1.2.1", 30, 10, 0, "b")
	r.expect(ds, "record(conversation.budget.exceeded budget.u1) record(conversation.tool.failed tool.b.failed)")
	if got := budgetEvent(t, ds); got.What != BudgetTokens || got.Limit != 100 || got.Used != 100 || got.Reason == "" {
		t.Fatalf("budget.exceeded data: %+v, want tokens, limit 100, used 100 and a reason", got)
	}
	r.expect(r.feed(ToolFailed, "tool.b.failed", "b", map[string]any{"call_id": "b", "error": map[string]any{"type": ReasonBudget, "message": "not run"}}),
		"record(conversation.budget.exceeded budget.u2)")
	r.expect(r.feed(UserMessage, "u3", "u3", map[string]any{"text": "please"}), "record(conversation.budget.exceeded budget.u3)")
}

// TestLoopBudgetCost: cost_usd sums to max_cost_usd; an answer without
// tool calls stands and the budget is reported spent with it.
func TestLoopBudgetCost(t *testing.T) {
	r := newLoopRun(t)
	r.feed(Started, "s", "s", map[string]any{"assistant": true, "budget": map[string]any{"max_tokens": 1_000_000, "max_cost_usd": 0.05}})
	r.feed(UserMessage, "u1", "u1", map[string]any{"text": "hi"})
	r.expect(r.completed("llm.u1.1.1", 10, 10, 0.01), "")
	r.expect(r.feed(UserMessage, "u1b", "u1b", map[string]any{"text": "more"}), "llm_call(llm.u1b.1.1 delay=0)")
	r.expect(r.completed("llm.u1b.1.1", 10, 10, 0.02), "")
	r.expect(r.feed(UserMessage, "u2", "u2", map[string]any{"text": "more"}), "llm_call(llm.u2.1.1 delay=0)")
	ds := r.completed("llm.u2.1.1", 10, 10, 0.02)
	r.expect(ds, "record(conversation.budget.exceeded budget.u2)")
	if got := budgetEvent(t, ds); got.What != BudgetCost || got.Limit != 0.05 || got.Used != 0.05 {
		t.Fatalf("budget.exceeded data: %+v, want cost, limit 0.05, used 0.05", got)
	}
	r.expect(r.feed(UserMessage, "u3", "u3", map[string]any{"text": "more"}), "record(conversation.budget.exceeded budget.u3)")
}

// TestLoopWithoutBudgetIgnoresUsage: usage alone never ends a turn.
func TestLoopWithoutBudgetIgnoresUsage(t *testing.T) {
	r := newLoopRun(t)
	r.feed(UserMessage, "u1", "u1", map[string]any{"text": "hi"})
	r.expect(r.completed("llm.u1.1.1", 1e9, 1e9, 1e6, "a"), "run_tool(a a approved=false)")
}

// TestLoopBudgetForkCountsItsOwnCalls: the calls a fork copies from its
// parent were the parent's spending; the fork's budget counts its own.
func TestLoopBudgetForkCountsItsOwnCalls(t *testing.T) {
	r := newLoopRun(t)
	r.feed(Started, "fork.p1/c0.x", "x", map[string]any{"assistant": true, "history": 3, "budget": map[string]any{"max_tokens": 100}})
	r.expect(r.feed(UserMessage, "u1", "u1", map[string]any{"text": "hi"}), "")
	r.expect(r.completed("llm.u1.1.1", 500, 500, 0), "")
	r.expect(r.feed(UserMessage, "u2", "u2", map[string]any{"text": "go on"}), "llm_call(llm.u2.1.1 delay=0)")
	r.expect(r.completed("llm.u2.1.1", 60, 40, 0), "record(conversation.budget.exceeded budget.u2)")
}
