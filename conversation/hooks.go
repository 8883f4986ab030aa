package conversation

import "fmt"

// HookDecided records what a hook answered at a hook point of the
// conversation: a NATS service on jido.hook.<project>.<event>, a local
// command, or the project's configured default when none answered in
// time. Its causationid is the call id for the tool hooks. The executor
// asks; the loop reads the decision, so a replay re-decides the
// conversation from the log without asking the hook again.
const HookDecided = "conversation.hook.decided"

// Hook points a project may hook (hooks.events in .jido/config.yaml).
const (
	// HookToolBefore is asked before a tool call runs: allow, deny, or
	// allow with rewritten arguments (which the runner validates against
	// the tool's input schema and holds to the policy and mode as any).
	HookToolBefore = "tool.before"
	// HookToolAfter is asked with a call's outcome before the model sees
	// it: allow, or deny, which replaces the outcome with a failure.
	HookToolAfter = "tool.after"
)

// HookEvents lists the hook points, in the order of a call.
func HookEvents() []string { return []string{HookToolBefore, HookToolAfter} }

// Hook decisions.
const (
	HookAllow = "allow"
	HookDeny  = "deny"
)

// ReasonHookDenied fails a tool call (before it runs, or its outcome
// after) that a hook denied.
const ReasonHookDenied = "hook_denied"

// hookDecided applies a tool.before decision to the call that waits for
// it: the executor of its RunTool asked the hook instead of running it.
// Allowed, it runs (with the hook's arguments when it rewrote them) and
// no hook is asked again; denied, it fails with the hook's reason. Any
// other hook's decision is a record only: tool.after's denial comes as
// the call's outcome.
func (d *decider) hookDecided() {
	st, data := d.st, d.ev.Data
	if data.Hook != HookToolBefore {
		return
	}
	c := d.pending(data.CallID)
	if c == nil || c.State != callRunning || c.Hooked {
		return // cancelled meanwhile, or decided already
	}
	if data.Decision != HookAllow {
		msg := fmt.Sprintf("a hook denied the call of %s", c.Name)
		if data.Reason != "" {
			msg += ": " + data.Reason
		}
		d.close(data.CallID, c, ToolFailed, ReasonHookDenied, msg)
		return
	}
	c.Hooked = true
	if len(data.Args) > 0 && string(data.Args) != "null" {
		c.Args = data.Args
	}
	d.out = append(d.out, RunTool{Conversation: d.key, CallID: data.CallID, Name: c.Name, Args: c.Args, Approved: c.Approved, Mode: st.Mode, Hooked: true})
}
