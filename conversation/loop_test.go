package conversation

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/jido-bus/jido-bus/agents"
)

// loopRun feeds events to Loop as the conversation agent would, keeping
// the loop's state between them, and collects the directives of each.
type loopRun struct {
	t      *testing.T
	state  agents.State
	status string
}

func newLoopRun(t *testing.T) *loopRun {
	return newLoopRunVersion(t, LoopVersion)
}

// newLoopRunVersion starts a conversation under loop version v (0: the
// member absent, as in a log written before versions).
func newLoopRunVersion(t *testing.T, v int) *loopRun {
	r := &loopRun{t: t, state: agents.State{}, status: "active"}
	data := map[string]any{"assistant": true}
	if v > 0 {
		data["loop"] = v
	}
	r.feed(Started, "started.p1/c1", "started.p1/c1", data)
	return r
}

// feed hands the loop one event and returns its directives.
func (r *loopRun) feed(typ, id, causation string, data map[string]any) []agents.Directive {
	r.t.Helper()
	whole, err := json.Marshal(map[string]any{"type": typ, "id": id, "causationid": causation, "data": data, "time": "2026-11-24T00:00:00Z"})
	if err != nil {
		r.t.Fatal(err)
	}
	env := agents.Env{AgentID: "p1/c1", State: agents.State{"loop": r.state["loop"], "status": r.status}}
	res, err := Loop(env, whole)
	if err != nil {
		r.t.Fatalf("%s %s: %v", typ, id, err)
	}
	for _, op := range res.Ops {
		sp, ok := op.(agents.SetPath)
		if !ok || len(sp.Path) != 1 || sp.Path[0] != "loop" {
			r.t.Fatalf("%s: the loop may only set its own member, got %#v", typ, op)
		}
		// Through JSON, as the agent's state holds it.
		b, err := json.Marshal(sp.Value)
		if err != nil {
			r.t.Fatal(err)
		}
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			r.t.Fatal(err)
		}
		r.state["loop"] = v
	}
	return res.Directives
}

// kinds describes directives compactly: "llm_call(llm.u1.1.1)",
// "run_tool(c1 read_file)", "record(conversation.tool.failed tool.c1.failed)".
func kinds(ds []agents.Directive) string {
	var parts []string
	for _, d := range ds {
		switch d := d.(type) {
		case LLMCall:
			parts = append(parts, fmt.Sprintf("llm_call(%s delay=%d)", d.Request, d.DelayMS))
		case RunTool:
			if len(d.Args) == 0 {
				parts = append(parts, "run_tool without args")
			}
			parts = append(parts, fmt.Sprintf("run_tool(%s %s approved=%v)", d.CallID, d.Name, d.Approved))
		case Record:
			parts = append(parts, fmt.Sprintf("record(%s %s)", d.Event.Type(), d.Event.ID()))
		case CancelTurn:
			parts = append(parts, "cancel_turn")
		case Compact:
			parts = append(parts, fmt.Sprintf("compact(%s %s keep=%d)", d.Request, d.Reason, d.KeepTokens))
		case agents.Schedule:
			parts = append(parts, fmt.Sprintf("schedule(%s %s %s)", d.Delay, d.Signal.Type(), d.Signal.ID()))
		case agents.ScheduleCancel:
			parts = append(parts, fmt.Sprintf("schedule_cancel(%s)", d.SignalID))
		default:
			parts = append(parts, d.DirectiveKind())
		}
	}
	return strings.Join(parts, " ")
}

func (r *loopRun) expect(got []agents.Directive, want string) {
	r.t.Helper()
	if k := kinds(got); k != want {
		r.t.Fatalf("directives:\n got  %s\n want %s", k, want)
	}
}

// answer feeds the outcome of LLM call req: a message and calls, then
// llm.completed.
func (r *loopRun) answer(req string, calls ...string) []agents.Directive {
	r.t.Helper()
	r.feed(AssistantMessage, req+".message", req, map[string]any{"text": "ok", "tool_calls": len(calls)})
	for i, c := range calls {
		name, args, _ := strings.Cut(c, " ")
		data := map[string]any{"call_id": name + "-" + fmt.Sprint(i+1), "name": name}
		if args == "BAD" {
			data["args_error"] = "unexpected end of JSON input"
			data["args_text"] = "{"
		} else {
			data["args"] = json.RawMessage(`{"path":"a.go"}`)
		}
		if ds := r.feed(ToolRequested, fmt.Sprintf("%s.call.%d", req, i+1), req, data); len(ds) != 0 {
			r.t.Fatalf("tool.requested decided %s; calls run only once the answer is complete", kinds(ds))
		}
	}
	return r.feed(LLMCompleted, req+".completed", req, map[string]any{"tool_calls": len(calls)})
}

func (r *loopRun) toolDone(call string) []agents.Directive {
	r.t.Helper()
	return r.feed(ToolCompleted, "tool."+call+".completed", call, map[string]any{"call_id": call, "output": "x"})
}

// TestLoopTurnWithToolCalls: a user message → an LLM call; its two tool
// calls run; when both are answered the model is asked again; an answer
// without calls ends the turn.
func TestLoopTurnWithToolCalls(t *testing.T) {
	r := newLoopRun(t)
	r.expect(r.feed(UserMessage, "u1", "u1", map[string]any{"text": "hi"}), "llm_call(llm.u1.1.1 delay=0)")
	r.expect(r.feed(LLMRequested, "llm.u1.1.1", "u1", map[string]any{"attempt": 1}), "")
	r.expect(r.answer("llm.u1.1.1", "read_file", "grep"), "run_tool(read_file-1 read_file approved=false) run_tool(grep-2 grep approved=false)")
	r.expect(r.toolDone("grep-2"), "")
	r.expect(r.toolDone("read_file-1"), "llm_call(llm.u1.2.1 delay=0)")
	r.expect(r.answer("llm.u1.2.1"), "")
	// Idle again: the next message starts a new turn.
	r.expect(r.feed(UserMessage, "u2", "u2", map[string]any{"text": "more"}), "llm_call(llm.u2.1.1 delay=0)")
}

// TestLoopParallelLimit: at most parallel_tools calls run at once; each
// outcome starts the next.
func TestLoopParallelLimit(t *testing.T) {
	r := newLoopRun(t)
	r.feed(Started, "s", "s", map[string]any{"assistant": true, "limits": map[string]any{"parallel_tools": 1}})
	r.feed(UserMessage, "u1", "u1", map[string]any{"text": "hi"})
	r.expect(r.answer("llm.u1.1.1", "a", "b"), "run_tool(a-1 a approved=false)")
	r.expect(r.toolDone("a-1"), "run_tool(b-2 b approved=false)")
	r.expect(r.toolDone("b-2"), "llm_call(llm.u1.2.1 delay=0)")
}

// TestLoopMaxSteps: a model that calls tools forever is stopped at
// max_steps with a recorded reason, never silently.
func TestLoopMaxSteps(t *testing.T) {
	r := newLoopRun(t)
	r.feed(Started, "s", "s", map[string]any{"assistant": true, "limits": map[string]any{"max_steps": 2}})
	r.feed(UserMessage, "u1", "u1", map[string]any{"text": "hi"})
	r.answer("llm.u1.1.1", "a")
	r.expect(r.toolDone("a-1"), "llm_call(llm.u1.2.1 delay=0)")
	r.answer("llm.u1.2.1", "a")
	r.expect(r.toolDone("a-1"), "record(conversation.llm.failed turn.u1.max_steps)")
	r.expect(r.feed(UserMessage, "u2", "u2", map[string]any{"text": "again"}), "llm_call(llm.u2.1.1 delay=0)")
}

// TestLoopMaxToolCalls: calls beyond max_tool_calls are not run but
// recorded failed, and the turn ends with the reason once the others
// are answered.
func TestLoopMaxToolCalls(t *testing.T) {
	r := newLoopRun(t)
	r.feed(Started, "s", "s", map[string]any{"assistant": true, "limits": map[string]any{"max_tool_calls": 1}})
	r.feed(UserMessage, "u1", "u1", map[string]any{"text": "hi"})
	r.expect(r.answer("llm.u1.1.1", "a", "b"), "record(conversation.tool.failed tool.b-2.failed) run_tool(a-1 a approved=false)")
	r.expect(r.toolDone("a-1"), "")
	r.expect(r.feed(ToolFailed, "tool.b-2.failed", "b-2", map[string]any{"call_id": "b-2"}), "record(conversation.llm.failed turn.u1.max_tool_calls)")
}

// TestLoopInvalidArgs: a call whose arguments are not JSON is recorded
// failed (the model hears why) and the loop goes on.
func TestLoopInvalidArgs(t *testing.T) {
	r := newLoopRun(t)
	r.feed(UserMessage, "u1", "u1", map[string]any{"text": "hi"})
	r.expect(r.answer("llm.u1.1.1", "a BAD"), "record(conversation.tool.failed tool.a-1.failed)")
	r.expect(r.feed(ToolFailed, "tool.a-1.failed", "a-1", map[string]any{"call_id": "a-1"}), "llm_call(llm.u1.2.1 delay=0)")
}

// TestLoopRetries: a retryable failure is retried with the executor's
// delay, an interrupted call at once; after MaxAttempts, or on a failure
// that cannot succeed, the turn ends.
func TestLoopRetries(t *testing.T) {
	r := newLoopRun(t)
	r.feed(UserMessage, "u1", "u1", map[string]any{"text": "hi"})
	r.expect(r.feed(LLMFailed, "llm.u1.1.1.failed", "llm.u1.1.1", map[string]any{"error": map[string]any{"type": "rate_limited", "message": "slow down"}, "retryable": true, "retry_in_ms": 1500}),
		"llm_call(llm.u1.1.2 delay=1500)")
	r.expect(r.feed(LLMFailed, "interrupted.llm.u1.1.2", "llm.u1.1.2", map[string]any{"error": map[string]any{"type": "interrupted", "message": "node stopped"}}),
		"llm_call(llm.u1.1.3 delay=0)")
	// A stale outcome of an earlier attempt changes nothing.
	r.expect(r.feed(LLMCompleted, "llm.u1.1.1.completed", "llm.u1.1.1", map[string]any{}), "")
	r.expect(r.feed(LLMFailed, "llm.u1.1.3.failed", "llm.u1.1.3", map[string]any{"error": map[string]any{"type": "auth", "message": "401"}}), "")
	r.expect(r.feed(UserMessage, "u2", "u2", map[string]any{"text": "again"}), "llm_call(llm.u2.1.1 delay=0)")
	for a := 1; a < MaxAttempts; a++ {
		req := fmt.Sprintf("llm.u2.1.%d", a)
		r.expect(r.feed(LLMFailed, req+".failed", req, map[string]any{"error": map[string]any{"type": "server"}, "retryable": true, "retry_in_ms": 10}),
			fmt.Sprintf("llm_call(llm.u2.1.%d delay=10)", a+1))
	}
	last := fmt.Sprintf("llm.u2.1.%d", MaxAttempts)
	r.expect(r.feed(LLMFailed, last+".failed", last, map[string]any{"error": map[string]any{"type": "server"}, "retryable": true}), "")
}

// TestLoopApproval: a call that needs a person waits (with a timeout
// scheduled); approve runs it approved, remember approves the tool for
// the conversation; deny records it failed; a decision withdraws the
// timeout, and a late one changes nothing.
func TestLoopApproval(t *testing.T) {
	r := newLoopRun(t)
	r.feed(UserMessage, "u1", "u1", map[string]any{"text": "hi"})
	r.answer("llm.u1.1.1", "run_command", "edit_file")
	r.expect(r.feed(ToolApprovalRequested, "approval.run_command-1.requested", "run_command-1", map[string]any{"call_id": "run_command-1", "name": "run_command", "timeout_ms": 60000}),
		"schedule(1m0s conversation.tool.approval approval.run_command-1.timeout)")
	r.expect(r.feed(ToolApproval, "approval.run_command-1.approve", "run_command-1", map[string]any{"call_id": "run_command-1", "decision": "approve", "remember": "conversation"}),
		"schedule_cancel(approval.run_command-1.timeout) run_tool(run_command-1 run_command approved=true)")
	r.expect(r.feed(ToolApproval, "approval.run_command-1.timeout", "run_command-1", map[string]any{"call_id": "run_command-1", "decision": "deny", "reason": "timeout"}), "")
	r.expect(r.feed(ToolApprovalRequested, "approval.edit_file-2.requested", "edit_file-2", map[string]any{"call_id": "edit_file-2", "name": "edit_file"}),
		"schedule(5m0s conversation.tool.approval approval.edit_file-2.timeout)")
	r.expect(r.feed(ToolApproval, "approval.edit_file-2.deny", "edit_file-2", map[string]any{"call_id": "edit_file-2", "decision": "deny", "by": "ann"}),
		"schedule_cancel(approval.edit_file-2.timeout) record(conversation.tool.failed tool.edit_file-2.failed)")
	r.toolDone("run_command-1")
	r.expect(r.feed(ToolFailed, "tool.edit_file-2.failed", "edit_file-2", map[string]any{"call_id": "edit_file-2"}), "llm_call(llm.u1.2.1 delay=0)")
	// Remembered: the next run_command is run approved at once.
	r.expect(r.answer("llm.u1.2.1", "run_command"), "run_tool(run_command-1 run_command approved=true)")
}

// TestLoopVersion1KeepsItsDecisions: a conversation started before loop
// versions (or under 1) is decided as then — a decided or cancelled
// approval leaves its timeout standing — so its log still replays
// exactly; the same events under version 2 withdraw it.
func TestLoopVersion1KeepsItsDecisions(t *testing.T) {
	for _, c := range []struct {
		version          int
		approve, cancels string
	}{
		{0, "run_tool(run_command-1 run_command approved=true)", "record(conversation.tool.cancelled tool.edit_file-2.cancelled)"},
		{1, "run_tool(run_command-1 run_command approved=true)", "record(conversation.tool.cancelled tool.edit_file-2.cancelled)"},
		{2, "schedule_cancel(approval.run_command-1.timeout) run_tool(run_command-1 run_command approved=true)",
			"schedule_cancel(approval.edit_file-2.timeout) record(conversation.tool.cancelled tool.edit_file-2.cancelled)"},
	} {
		t.Run(fmt.Sprintf("v%d", c.version), func(t *testing.T) {
			r := newLoopRunVersion(t, c.version)
			r.feed(UserMessage, "u1", "u1", map[string]any{"text": "hi"})
			r.answer("llm.u1.1.1", "run_command", "edit_file")
			r.feed(ToolApprovalRequested, "approval.run_command-1.requested", "run_command-1", map[string]any{"call_id": "run_command-1", "name": "run_command"})
			r.expect(r.feed(ToolApproval, "approval.run_command-1.approve", "run_command-1", map[string]any{"call_id": "run_command-1", "decision": "approve"}), c.approve)
			r.feed(ToolApprovalRequested, "approval.edit_file-2.requested", "edit_file-2", map[string]any{"call_id": "edit_file-2", "name": "edit_file"})
			r.expect(r.feed(Cancel, "x1", "x1", map[string]any{"reason": "stop"}), "cancel_turn "+c.cancels)
		})
	}
}

// TestLoopApprovalTimeout: the timeout denies a call nobody decided, and
// is not withdrawn (it has been delivered); a cancel withdraws the
// timeout of a call awaiting approval.
func TestLoopApprovalTimeout(t *testing.T) {
	r := newLoopRun(t)
	r.feed(UserMessage, "u1", "u1", map[string]any{"text": "hi"})
	r.answer("llm.u1.1.1", "run_command", "edit_file")
	r.feed(ToolApprovalRequested, "approval.run_command-1.requested", "run_command-1", map[string]any{"call_id": "run_command-1", "name": "run_command"})
	r.feed(ToolApprovalRequested, "approval.edit_file-2.requested", "edit_file-2", map[string]any{"call_id": "edit_file-2", "name": "edit_file"})
	r.expect(r.feed(ToolApproval, "approval.run_command-1.timeout", "run_command-1", map[string]any{"call_id": "run_command-1", "decision": "deny", "reason": "timeout", "by": "jido"}),
		"record(conversation.tool.failed tool.run_command-1.failed)")
	r.expect(r.feed(Cancel, "x1", "x1", map[string]any{"reason": "stop"}),
		"schedule_cancel(approval.edit_file-2.timeout) record(conversation.tool.cancelled tool.edit_file-2.cancelled)")
}

// TestLoopCancel: cancel during a turn cancels the work in flight and
// records the calls not started; outcomes arriving later change nothing;
// a user message starts a new turn.
func TestLoopCancel(t *testing.T) {
	r := newLoopRun(t)
	r.feed(Started, "s", "s", map[string]any{"assistant": true, "limits": map[string]any{"parallel_tools": 1}})
	r.feed(UserMessage, "u1", "u1", map[string]any{"text": "hi"})
	r.answer("llm.u1.1.1", "a", "b")
	r.expect(r.feed(Cancel, "x1", "x1", map[string]any{"reason": "stop"}), "cancel_turn record(conversation.tool.cancelled tool.b-2.cancelled)")
	r.expect(r.feed(ToolCancelled, "tool.a-1.cancelled", "a-1", map[string]any{"call_id": "a-1"}), "")
	r.expect(r.feed(ToolCancelled, "tool.b-2.cancelled", "b-2", map[string]any{"call_id": "b-2"}), "")
	r.status = "cancelled"
	r.expect(r.feed(UserMessage, "u2", "u2", map[string]any{"text": "again"}), "llm_call(llm.u2.1.1 delay=0)")
	r.expect(r.feed(Cancel, "x2", "x2", map[string]any{}), "cancel_turn")
	r.expect(r.feed(LLMFailed, "llm.u2.1.1.failed", "llm.u2.1.1", map[string]any{"error": map[string]any{"type": "cancelled"}}), "")
}

// TestLoopQueuedMessage: a message during a turn is in the next LLM
// call's context; only one that came after the last call gets a turn of
// its own.
func TestLoopQueuedMessage(t *testing.T) {
	r := newLoopRun(t)
	r.feed(UserMessage, "u1", "u1", map[string]any{"text": "hi"})
	r.expect(r.feed(UserMessage, "u2", "u2", map[string]any{"text": "also"}), "")
	r.expect(r.answer("llm.u1.1.1"), "llm_call(llm.u2.1.1 delay=0)")
	r.answer("llm.u2.1.1", "a")
	r.expect(r.feed(UserMessage, "u3", "u3", map[string]any{"text": "and"}), "")
	r.expect(r.toolDone("a-1"), "llm_call(llm.u2.2.1 delay=0)")
	r.expect(r.answer("llm.u2.2.1"), "")
}

// TestLoopStoppedConversation: a stopped conversation takes no turn.
func TestLoopStoppedConversation(t *testing.T) {
	r := newLoopRun(t)
	r.status = "stopped"
	r.expect(r.feed(UserMessage, "u1", "u1", map[string]any{"text": "hi"}), "")
}

// TestLoopOffWithoutAssistant: a conversation started without the
// assistant (driven from outside) gets no LLM call from the loop.
func TestLoopOffWithoutAssistant(t *testing.T) {
	r := &loopRun{t: t, state: agents.State{}, status: "active"}
	r.feed(Started, "s", "s", map[string]any{"project_id": "p1"})
	r.expect(r.feed(UserMessage, "u1", "u1", map[string]any{"text": "hi"}), "")
}

// TestLoopForkCopiesWithoutActing: a fork's started says how many of the
// parent's events follow; the loop folds them (a turn in flight) but acts
// on none, and acts again from the first event after them.
func TestLoopForkCopiesWithoutActing(t *testing.T) {
	r := &loopRun{t: t, state: agents.State{}, status: "active"}
	r.feed(Started, "fork.p0/c0.x", "x", map[string]any{"assistant": true, "history": 3})
	r.expect(r.feed(UserMessage, "u1", "u1", map[string]any{"text": "hi"}), "")
	r.expect(r.feed(LLMRequested, "llm.u1.1.1", "u1", map[string]any{}), "")
	r.feed(AssistantMessage, "llm.u1.1.1.message", "llm.u1.1.1", map[string]any{"text": "a", "tool_calls": 1})
	// The fork's own events: the parent's LLM call in flight is closed
	// interrupted, and the loop makes it again.
	r.expect(r.feed(LLMFailed, "interrupted.llm.u1.1.1", "llm.u1.1.1", map[string]any{"error": map[string]any{"type": "interrupted"}}),
		"llm_call(llm.u1.1.2 delay=0)")
}
