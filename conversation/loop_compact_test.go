package conversation

import (
	"testing"

	"github.com/jido-bus/jido-bus/agents"
)

// requested feeds the conversation.llm.requested of req with the window
// and context estimate its executor records.
func (r *loopRun) requested(req string, window, tokens int64) {
	r.t.Helper()
	r.expect(r.feed(LLMRequested, req, "x", map[string]any{"model": "m", "window": window, "context_tokens": tokens}), "")
}

// TestLoopCompactsNearTheWindow: once the provider's reported usage
// reaches CompactAtPercent of the window llm.requested recorded, the
// turn's next LLM call waits for a compaction, which goes on to the call
// once conversation.compacted is in; the summary's usage counts toward
// the budget, and a context far from the window is not compacted.
func TestLoopCompactsNearTheWindow(t *testing.T) {
	r := newLoopRun(t)
	r.feed(Started, "s", "s", map[string]any{"assistant": true, "budget": map[string]any{"max_tokens": 1_000_000}})
	r.expect(r.feed(UserMessage, "u1", "u1", map[string]any{"text": "the task"}), "llm_call(llm.u1.1.1 delay=0)")
	r.requested("llm.u1.1.1", 1000, 100)
	r.expect(r.completed("llm.u1.1.1", 500, 100, 0, "a"), "run_tool(a a approved=false)")
	r.expect(r.toolDone("a"), "llm_call(llm.u1.2.1 delay=0)") // 600 + the result's estimate < 800
	r.requested("llm.u1.2.1", 1000, 700)
	r.expect(r.completed("llm.u1.2.1", 750, 60, 0, "b"), "run_tool(b b approved=false)")
	r.expect(r.toolDone("b"), "compact(compact.u1.3 window keep=250)")
	// A compaction closes no turn: a message meanwhile waits as always.
	r.expect(r.feed(UserMessage, "u2", "u2", map[string]any{"text": "also"}), "")
	r.expect(r.feed(Compacted, "compact.u1.3.done", "compact.u1.3", map[string]any{
		"summary": "s", "tokens_before": 900, "tokens_after": 300, "usage": map[string]any{"input_tokens": 900, "output_tokens": 50},
		"replaces": map[string]any{"from_seq": 3, "to_seq": 9, "messages": 5},
	}), "llm_call(llm.u1.3.1 delay=0)")
	// u2 was in the context of that call: no turn of its own.
	r.expect(r.completed("llm.u1.3.1", 350, 10, 0), "")
	if used := r.loop().Used.Tokens; used != 600+810+950+360 {
		t.Fatalf("budget used %d tokens, want the summary's 950 counted beside the calls'", used)
	}
}

// loop returns the loop's state.
func (r *loopRun) loop() loopState {
	r.t.Helper()
	st, err := agents.Decode[loopState](r.state["loop"])
	if err != nil {
		r.t.Fatal(err)
	}
	return st
}

// TestLoopCompactionFailedGoesOn: a failed compaction lets the turn's
// call go ahead uncompacted and is not tried again on its own in that
// turn; the next turn tries again.
func TestLoopCompactionFailedGoesOn(t *testing.T) {
	r := newLoopRun(t)
	r.feed(Started, "s", "s", map[string]any{"assistant": true})
	r.feed(UserMessage, "u1", "u1", map[string]any{"text": "the task"})
	r.requested("llm.u1.1.1", 1000, 100)
	r.expect(r.completed("llm.u1.1.1", 900, 10, 0, "a"), "run_tool(a a approved=false)")
	r.expect(r.toolDone("a"), "compact(compact.u1.2 window keep=250)")
	r.expect(r.feed(CompactionFailed, "compact.u1.2.failed", "compact.u1.2", map[string]any{"error": map[string]any{"type": "server", "message": "down"}}),
		"llm_call(llm.u1.2.1 delay=0)")
	r.requested("llm.u1.2.1", 1000, 950)
	r.expect(r.completed("llm.u1.2.1", 950, 10, 0, "b"), "run_tool(b b approved=false)")
	r.expect(r.toolDone("b"), "llm_call(llm.u1.3.1 delay=0)")
	r.expect(r.completed("llm.u1.3.1", 960, 10, 0), "")
	r.expect(r.feed(UserMessage, "u2", "u2", map[string]any{"text": "next"}), "compact(compact.u2.1 window keep=250)")
	// A result for no compaction in flight changes nothing.
	r.expect(r.feed(Compacted, "x.done", "compact.other", map[string]any{"summary": "s", "tokens_before": 1, "tokens_after": 1, "replaces": map[string]any{"from_seq": 1, "to_seq": 1, "messages": 1}}), "")
}

// TestLoopCompactAsked: conversation.compact between turns compacts at
// once and a message meanwhile starts its turn after the summary; one
// during a turn is done before the turn's next LLM call, whatever the
// window; a conversation whose calls recorded no window (an older
// node's) never compacts on its own.
func TestLoopCompactAsked(t *testing.T) {
	r := newLoopRun(t)
	r.feed(Started, "s", "s", map[string]any{"assistant": true})
	r.feed(UserMessage, "u1", "u1", map[string]any{"text": "the task"})
	r.expect(r.completed("llm.u1.1.1", 1e6, 1e6, 0), "")
	r.expect(r.feed(CompactAsked, "k1", "k1", map[string]any{"by": "ops"}), "compact(compact.k1 asked keep=0)")
	r.expect(r.feed(CompactAsked, "k2", "k2", map[string]any{}), "") // one at a time
	r.expect(r.feed(UserMessage, "u2", "u2", map[string]any{"text": "next"}), "")
	r.expect(r.feed(Compacted, "compact.k1.done", "compact.k1", map[string]any{"summary": "s", "tokens_before": 9, "tokens_after": 3, "replaces": map[string]any{"from_seq": 2, "to_seq": 4, "messages": 2}}),
		"llm_call(llm.u2.1.1 delay=0)")
	r.expect(r.completed("llm.u2.1.1", 1e6, 1e6, 0, "a"), "run_tool(a a approved=false)")
	r.expect(r.feed(CompactAsked, "k3", "k3", map[string]any{}), "")
	r.expect(r.toolDone("a"), "compact(compact.k3 asked keep=0)")
	r.expect(r.feed(CompactionFailed, "compact.k3.failed", "compact.k3", map[string]any{"error": map[string]any{"type": "nothing_to_compact", "message": "x"}}),
		"llm_call(llm.u2.2.1 delay=0)")
	// Asked during a turn that then ends without another call: done at
	// its end.
	r.expect(r.feed(CompactAsked, "k4", "k4", map[string]any{}), "")
	r.expect(r.completed("llm.u2.2.1", 1, 1, 0), "compact(compact.k4 asked keep=0)")
}

// TestLoopCancelDuringCompaction: a cancel during a turn's compaction
// ends the turn; the summary that comes after starts no call.
func TestLoopCancelDuringCompaction(t *testing.T) {
	r := newLoopRun(t)
	r.feed(Started, "s", "s", map[string]any{"assistant": true})
	r.feed(UserMessage, "u1", "u1", map[string]any{"text": "the task"})
	r.requested("llm.u1.1.1", 100, 10)
	r.expect(r.completed("llm.u1.1.1", 90, 10, 0, "a"), "run_tool(a a approved=false)")
	r.expect(r.toolDone("a"), "compact(compact.u1.2 window keep=25)")
	r.expect(r.feed(Cancel, "c", "c", map[string]any{}), "")
	r.expect(r.feed(Compacted, "compact.u1.2.done", "compact.u1.2", map[string]any{"summary": "s", "tokens_before": 9, "tokens_after": 3, "replaces": map[string]any{"from_seq": 2, "to_seq": 4, "messages": 2}}), "")
	r.expect(r.feed(UserMessage, "u2", "u2", map[string]any{"text": "next"}), "llm_call(llm.u2.1.1 delay=0)")
}
