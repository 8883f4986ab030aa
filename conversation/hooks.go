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
	// HookTurnStart is asked when a user message starts a turn, before
	// any model call: allow, or deny, which ends the turn failed
	// hook_denied with the hook's reason. It may not rewrite the message:
	// the log keeps what the user wrote, and the model reads that.
	HookTurnStart = "turn.start"
	// HookTurnEnd is told how a turn ended with the model's final answer
	// (its text and usage). Its decision is recorded and shown, and
	// changes nothing: the answer was streamed and logged before the hook
	// could read it, so a deny flags it, it cannot withhold it.
	HookTurnEnd = "turn.end"
)

// HookEvents lists the hook points, in the order of a turn.
func HookEvents() []string {
	return []string{HookTurnStart, HookToolBefore, HookToolAfter, HookTurnEnd}
}

// Hook decisions.
const (
	HookAllow = "allow"
	HookDeny  = "deny"
)

// ReasonHookDenied fails a tool call (before it runs, or its outcome
// after), or a turn before its first model call, that a hook denied.
const ReasonHookDenied = "hook_denied"

// ReasonHookRewriteTooLarge fails a tool call whose tool.before hook
// rewrote the arguments into more than an event may hold: the decision
// cannot be logged, so the call cannot run on it, and it is not run on
// the model's arguments either.
const ReasonHookRewriteTooLarge = "hook_rewrite_too_large"

// ReasonHookUnrecorded fails a tool call or a turn whose hook decision
// could not be written to the log for another reason: a decision that is
// not in the log would leave the call or the turn waiting for ever.
const ReasonHookUnrecorded = "hook_unrecorded"

// hookDecided applies a tool.before decision to the call that waits for
// it: the executor of its RunTool asked the hook instead of running it.
// Allowed, it runs (with the hook's arguments when it rewrote them) and
// no hook is asked again; denied, it fails with the hook's reason. Any
// other hook's decision is a record only: tool.after's denial comes as
// the call's outcome.
func (d *decider) hookDecided() {
	st, data := d.st, d.ev.Data
	if data.Hook == HookTurnStart {
		d.turnHookDecided()
		return
	}
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

// turnHookDecided applies a turn.start decision to the turn whose first
// model call waits for it (the executor of its LLMCall asked the hook
// instead of the model; its causationid is the turn's user message).
// Allowed, the call is made, and no hook is asked again this turn;
// denied, the turn ends failed hook_denied before any model call.
func (d *decider) turnHookDecided() {
	st, ev := d.st, d.ev
	if st.Turn == "" || ev.CausationID != st.Turn || st.Request == "" || st.TurnHooked {
		return // the turn ended meanwhile (cancelled), or decided already
	}
	if ev.Data.Decision != HookAllow {
		msg := "a hook denied the turn before the model was asked"
		if ev.Data.Reason != "" {
			msg += ": " + ev.Data.Reason
		}
		st.Request = ""
		d.failTurn(ReasonHookDenied, msg)
		return
	}
	st.TurnHooked = true
	d.out = append(d.out, LLMCall{Conversation: d.key, Request: st.Request, Step: st.Step, Attempt: st.Attempt, LLM: st.LLM, Hooked: true})
}
