package conversation

import (
	"encoding/json"
	"testing"
)

// TestLoopHookBefore: the loop runs a call again, hooked and with the
// hook's arguments, once it reads an allow; a deny fails the call
// hook_denied without running it; a decision for a call that is no
// longer waiting, or a second one, or a tool.after record, decides
// nothing.
func TestLoopHookBefore(t *testing.T) {
	r := newLoopRun(t)
	r.feed(Started, "s", "s", map[string]any{"assistant": true, "mode": ModeAsk})
	r.feed(UserMessage, "u1", "u1", map[string]any{"text": "hi"})
	r.expect(r.answer("llm.u1.1.1", "write_file", "run_command"), "run_tool(write_file-1 write_file approved=false) run_tool(run_command-2 run_command approved=false)")

	// The executor asked the hook instead of running write_file-1.
	ds := r.feed(HookDecided, "hook.write_file-1.before", "write_file-1", map[string]any{
		"call_id": "write_file-1", "hook": HookToolBefore, "decision": HookAllow, "args": json.RawMessage(`{"path":"safe.go"}`), "by": "team-rules"})
	r.expect(ds, "run_tool(write_file-1 write_file approved=false)")
	rt := ds[0].(RunTool)
	if !rt.Hooked || string(rt.Args) != `{"path":"safe.go"}` || rt.Mode != ModeAsk {
		t.Fatalf("allowed call: %+v, want hooked, the hook's args and the conversation's mode", rt)
	}
	r.expect(r.feed(HookDecided, "hook.write_file-1.before.again", "write_file-1", map[string]any{
		"call_id": "write_file-1", "hook": HookToolBefore, "decision": HookDeny}), "")

	// A person approves the rewritten call: it runs with the hook's
	// arguments and is not hooked again.
	r.feed(ToolApprovalRequested, "approval.write_file-1.requested", "write_file-1", map[string]any{"call_id": "write_file-1", "name": "write_file", "timeout_ms": 1000})
	ds = r.feed(ToolApproval, "approval.write_file-1.approve", "write_file-1", map[string]any{"call_id": "write_file-1", "decision": DecisionApprove})
	if rt := ds[len(ds)-1].(RunTool); !rt.Hooked || !rt.Approved || string(rt.Args) != `{"path":"safe.go"}` {
		t.Fatalf("approved call: %+v, want hooked, approved, the hook's args", rt)
	}

	r.expect(r.feed(HookDecided, "hook.run_command-2.before", "run_command-2", map[string]any{
		"call_id": "run_command-2", "hook": HookToolBefore, "decision": HookDeny, "reason": "no rm"}), "record(conversation.tool.failed tool.run_command-2.failed)")
	r.expect(r.feed(ToolFailed, "tool.run_command-2.failed", "run_command-2", map[string]any{"call_id": "run_command-2", "error": map[string]any{"type": ReasonHookDenied}}), "")
	r.expect(r.feed(HookDecided, "hook.write_file-1.after", "write_file-1", map[string]any{
		"call_id": "write_file-1", "hook": HookToolAfter, "decision": HookDeny}), "")
	r.expect(r.toolDone("write_file-1"), "llm_call(llm.u1.2.1 delay=0)")
	r.expect(r.feed(HookDecided, "hook.late", "write_file-1", map[string]any{
		"call_id": "write_file-1", "hook": HookToolBefore, "decision": HookAllow}), "")
}

// TestLoopHookDeniedReason: the denial the model reads names the hook's
// reason.
func TestLoopHookDeniedReason(t *testing.T) {
	r := newLoopRun(t)
	r.feed(UserMessage, "u1", "u1", map[string]any{"text": "hi"})
	r.answer("llm.u1.1.1", "run_command")
	ds := r.feed(HookDecided, "hook.run_command-1.before", "run_command-1", map[string]any{
		"call_id": "run_command-1", "hook": HookToolBefore, "decision": HookDeny, "reason": "no rm"})
	var data struct {
		Error struct{ Type, Message string }
	}
	if err := ds[0].(Record).Event.DataAs(&data); err != nil {
		t.Fatal(err)
	}
	if data.Error.Type != ReasonHookDenied || data.Error.Message != "a hook denied the call of run_command: no rm" {
		t.Fatalf("denial: %+v", data.Error)
	}
}
