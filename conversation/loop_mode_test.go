package conversation

import (
	"strings"
	"testing"

	"github.com/jido-bus/jido-bus/agents"
)

// modes returns the Mode of each RunTool among ds, in order.
func modes(ds []agents.Directive) string {
	var ms []string
	for _, d := range ds {
		if rt, ok := d.(RunTool); ok {
			ms = append(ms, rt.CallID+"="+rt.Mode)
		}
	}
	return strings.Join(ms, " ")
}

// TestLoopModeFromStartAndEvent: the mode of conversation.started goes
// with every RunTool; a conversation.mode changes it for the calls run
// after it (an approval's run too); auto is kept as "" so that a
// conversation that never left it decides what it always did.
func TestLoopModeFromStartAndEvent(t *testing.T) {
	r := newLoopRun(t)
	r.feed(Started, "s", "s", map[string]any{"assistant": true, "mode": ModePlan})
	r.expect(r.feed(UserMessage, "u1", "u1", map[string]any{"text": "hi"}), "llm_call(llm.u1.1.1 delay=0)")
	if got := modes(r.completed("llm.u1.1.1", 1, 1, 0, "a")); got != "a=plan" {
		t.Fatalf("started in plan: %q, want a=plan", got)
	}
	r.expect(r.feed(ModeChanged, "m1", "m1", map[string]any{"mode": ModeAsk, "by": "alice"}), "")
	r.expect(r.toolDone("a"), "llm_call(llm.u1.2.1 delay=0)")
	if got := modes(r.completed("llm.u1.2.1", 1, 1, 0, "b")); got != "b=ask" {
		t.Fatalf("after conversation.mode ask: %q, want b=ask", got)
	}
	// The runner asked a person; meanwhile the mode goes back to plan:
	// the approval runs the call under plan, which the runner refuses
	// for a tool that writes or runs, approved or not.
	r.feed(ToolApprovalRequested, "approval.b.requested", "b", map[string]any{"call_id": "b", "name": "b", "timeout_ms": 1000})
	r.feed(ModeChanged, "m2", "m2", map[string]any{"mode": ModePlan})
	ds := r.feed(ToolApproval, "approval.b.approve", "b", map[string]any{"call_id": "b", "decision": DecisionApprove})
	if got := modes(ds); got != "b=plan" {
		t.Fatalf("approval after conversation.mode plan: %q, want b=plan", got)
	}
	r.feed(ModeChanged, "m3", "m3", map[string]any{"mode": ModeAuto})
	r.expect(r.toolDone("b"), "llm_call(llm.u1.3.1 delay=0)")
	if got := modes(r.completed("llm.u1.3.1", 1, 1, 0, "c")); got != "c=" {
		t.Fatalf("after conversation.mode auto: %q, want c= (auto is the zero mode)", got)
	}
}

// TestLoopModeUnknownIsPlan: a mode the loop does not know (only a
// hand-made event can carry one: the API refuses it) is read as the
// strictest, never as the policy alone.
func TestLoopModeUnknownIsPlan(t *testing.T) {
	r := newLoopRun(t)
	r.feed(Started, "s", "s", map[string]any{"assistant": true, "mode": "yolo"})
	r.feed(UserMessage, "u1", "u1", map[string]any{"text": "hi"})
	if got := modes(r.completed("llm.u1.1.1", 1, 1, 0, "a")); got != "a=plan" {
		t.Fatalf("unknown mode: %q, want a=plan", got)
	}
}

func TestCheckMode(t *testing.T) {
	for _, m := range []string{"", ModePlan, ModeAsk, ModeAuto} {
		if err := CheckMode(m); err != nil {
			t.Errorf("CheckMode(%q): %v", m, err)
		}
	}
	if err := CheckMode("read-only"); err == nil || !strings.Contains(err.Error(), "want plan") {
		t.Errorf("CheckMode(read-only): %v, want a refusal naming the modes", err)
	}
	if !(ModeRank(ModePlan) < ModeRank(ModeAsk) && ModeRank(ModeAsk) < ModeRank(ModeAuto) && ModeRank("") == ModeRank(ModeAuto)) {
		t.Error("ModeRank does not order plan < ask < auto = \"\"")
	}
}
